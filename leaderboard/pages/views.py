"""The leaderboard page and its htmx fragments. Thin: parse, call selectors, render.

One view serves the whole page, the board fragment (a tab switch, ``HX-Target:
lb-board``) and the results fragment (filters and sorting, ``HX-Target: lb-results``).
Every link has a real ``href``, so the page works without JavaScript.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django_htmx.http import reswap, retarget

from leaderboard.boards import UnknownBoard, board_section, boards
from leaderboard.pages import board_plots, selectors
from leaderboard.pages.model_pages import model_page as model_page_data
from leaderboard.pages.stats import board_rating_soon
from releases.selectors import release_covering
from releases.sources import reproducible_boards

TEMPLATE = "leaderboard/leaderboard.html"

# sort key -> column label, for the sortable headers
SORTABLE = {"rating": "Score", "elo": "Elo", "votes": "Votes", "win_rate": "Win rate",
            "name": "Model", "controversy": "Controversy", "factuality": "Factuality"}
DEFAULT_ORDERS = {key: order for key, (_field, order) in
                  {**selectors.SORTS, **selectors.METRIC_SORTS}.items()}


def _url(query: selectors.Query, **changes) -> str:
    q = {
        "board": query.board,
        "sort": query.sort,
        "order": query.order,
        "organization": query.organization,
        "license": query.license,
        "q": query.search,
        "deprecated": "1" if query.include_deprecated else "",
        "style": "1" if query.style_control else "",
        "category": query.category,
    }
    q.update(changes)
    if q["sort"] == "rating" and q["order"] == "desc":
        q["sort"] = q["order"] = ""
    return "/leaderboard/?" + urlencode({k: v for k, v in q.items() if v})


def _sort_links(query: selectors.Query) -> dict[str, dict]:
    links = {}
    for key, label in SORTABLE.items():
        active = query.sort == key or (key == "rating" and query.sort == "score")
        default = DEFAULT_ORDERS[key]
        order = ("asc" if query.order == "desc" else "desc") if active else default
        links[key] = {
            "url": _url(query, sort=key, order=order),
            "label": label,
            "active": active,
            "aria": ("descending" if query.order == "desc" else "ascending") if active else "none",
            "arrow": ("▼" if query.order == "desc" else "▲") if active else "",
        }
    return links


def _category_links(query: selectors.Query, page: selectors.BoardPage) -> list[dict]:
    """The category selector: the whole board, then each category with its votes; one
    without a board of its own yet says how many votes it still needs."""
    if not page.categories:
        return []
    least = settings.ARENA_LEADERBOARD_CATEGORY_MIN_VOTES
    links = [{"name": "all", "title": "All", "votes": page.whole_votes, "rated": True,
              "active": not query.category, "url": _url(query, category="", style="")}]
    for option in page.categories:
        links.append({"name": option.name, "title": option.title, "votes": option.votes,
                      "rated": option.rated, "active": option.name == query.category,
                      "needs": max(least - option.votes, 0),
                      "url": _url(query, category=option.name, style="")})
    return links


def _tabs(current: str | None) -> list[dict]:
    return [
        {"board": b, "url": _url(selectors.Query(board=b.name)), "active": b.name == current}
        for b in boards()
    ]


def _release(page: selectors.BoardPage) -> dict | None:
    """The open data release holding the votes the board's rating run read, the run's start
    (``rate --until``) and whether ``rate`` rebuilds the board from it; None before a release
    covers it."""
    if page.snapshot is None:
        return None
    started = page.snapshot.run.started_at if page.snapshot.run else page.snapshot.created_at
    release = release_covering(board=page.board.name, moment=started)
    return release and {"release": release, "until": started.isoformat(),
                        "reproduces": page.board.name in reproducible_boards()}


@require_GET
def leaderboard_page(request: HttpRequest) -> HttpResponse:
    get = request.GET
    try:
        query = selectors.leaderboard_query_clean(
            board=get.get("board") or None,
            sort=get.get("sort") or None,
            order=get.get("order") or None,
            organization=get.get("organization"),
            license=get.get("license"),
            search=get.get("q") or get.get("search"),
            include_deprecated=get.get("deprecated") in {"1", "true", "on"},
            style_control=get.get("style") in {"1", "true", "on"},
            category=get.get("category"),
        )
    except (selectors.QueryError, UnknownBoard) as exc:
        status = 404 if isinstance(exc, UnknownBoard) else 400
        message = exc.args[0] if exc.args else str(exc)
        template = f"{TEMPLATE}#error" if request.htmx else TEMPLATE
        return render(request, template, {"error": message, "tabs": _tabs(None)}, status=status)
    target = request.htmx.target if request.htmx else None
    rating_soon = board_rating_soon(board=query.board)
    if target == "lb-rating-soon" and rating_soon:  # a page asks whether its run is in: not yet
        return render(request, f"{TEMPLATE}#rating-soon", {"rating_soon": True})
    page = selectors.leaderboard_view(query=query)
    links = _sort_links(query)
    context = {
        "page": page,
        "q": query,
        "tabs": _tabs(query.board),
        "sort_links": links,
        "metric_links": [{"key": sort, "link": links[sort]} for sort, _ in page.metric_columns],
        "category_links": _category_links(query, page),
        "plots": board_plots.board_plots(page=page),
        "reset_url": _url(selectors.Query(board=query.board)),
        "section": board_section(page.board),
        "release": _release(page),
        "rating_soon": rating_soon,
    }
    if target == "lb-rating-soon":  # it is in: the board, in place of the whole board
        return reswap(retarget(render(request, f"{TEMPLATE}#board", context), "#lb-board"),
                      "outerHTML")
    if target == "lb-results":
        return render(request, f"{TEMPLATE}#results", context)
    if target == "lb-board":
        return render(request, f"{TEMPLATE}#board", context)
    return render(request, TEMPLATE, context)


@require_GET
def model_page(request: HttpRequest, model_id: str) -> HttpResponse:
    page = model_page_data(model_id=model_id)
    if page is None:
        raise Http404("no such model")
    return render(request, "leaderboard/model.html", {"page": page})

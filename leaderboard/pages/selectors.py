"""Reads of the leaderboard: the latest snapshot of a board, filtered and sorted.

Everything here reads stored snapshots (and the online Elo table); nothing fits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from django.conf import settings

from arena.contests.proportions import Z95
from arena.prompt_categories import category_title
from leaderboard.boards import Board, board_metrics, boards, get_board
from leaderboard.models import BoardSnapshot, OnlineElo, RatingRun, RunStatus, SnapshotEntry
from leaderboard.runs.compute import style_coefficient

ENTRY_FIELDS = (
    "subject", "name", "organization", "license", "deprecated", "provisional", "rating",
    "ci_lower", "ci_upper", "rank_ub", "rank_ub_active", "votes", "wins", "losses", "ties",
    "both_bad", "win_rate", "volatility", "style_rating", "style_ci_lower", "style_ci_upper",
    "style_rank_ub", "style_rank_ub_active",
)

SORTS = {
    # public name -> (field, default order)
    "rating": ("rating", "desc"),
    "score": ("rating", "desc"),
    "votes": ("votes", "desc"),
    "win_rate": ("win_rate", "desc"),
    "name": ("name", "asc"),
    "elo": ("elo", "desc"),
}
# Sorts by a figure a board adds to its entries (``Board.metrics``; seed 004's leaderboard
# entry names them): public name -> (figure, default order).
METRIC_SORTS = {
    "controversy": ("controversy_index", "desc"),
    "factuality": ("avg_factuality", "desc"),
}
ORDERS = ("asc", "desc")

BAD_SORT = "Unknown sort {value!r}: use one of " + ", ".join([*SORTS, *METRIC_SORTS]) + "."
NO_METRIC = ("The {board} board has no {value} figure to sort by: sort={value} is for the "
             "boards that have one ({names}).")
BAD_ORDER = "Unknown order {value!r}: use asc or desc."
NO_CATEGORY_BOARD = ("No {board} board for the category {value!r}: a category gets a board "
                     "of its own at {least} counted votes. Categories rated now: {names}.")

METHOD_LABELS = {"bt": "Bradley–Terry", "elo": "Elo", "glicko2": "Glicko-2"}
CI_LABELS = {
    "sandwich": "sandwich (robust) 95% intervals",
    "bootstrap": "bootstrap 95% intervals",
    "rd": "±1.96 RD",
    "none": "no intervals",
}


@dataclass
class Query:
    """What a visitor asked for; :func:`leaderboard_query_clean` validates it."""

    board: str
    sort: str = "rating"
    order: str = "desc"
    organization: str = ""
    license: str = ""
    search: str = ""
    include_deprecated: bool = False
    include_provisional: bool = True
    style_control: bool = False  # the style-controlled ratings, where the board has them
    category: str = ""  # a category board of ``board`` ("" is the whole board)


@dataclass(frozen=True)
class CategoryOption:
    """A category of a board, as its selector lists it."""

    name: str
    title: str
    votes: int
    rated: bool  # it has a board of its own (enough votes)


@dataclass
class Row:
    """One entry as a page shows it; display strings are built here, not in templates."""

    e: SnapshotEntry  # or a named tuple with its fields (ENTRY_FIELDS)
    rank: int  # Rank (UB) in the view asked for (0 for provisional)
    elo: float | None
    metrics: dict[str, float | None] = field(default_factory=dict)  # the board's own figures

    @property
    def rd(self) -> float | None:
        """Glicko-2's rating deviation (its interval is ± 1.96 RD); None on other boards."""
        if self.e.volatility is None:
            return None
        return (self.e.ci_upper - self.e.rating) / Z95

    @property
    def glicko_display(self) -> str:
        """RD and volatility σ, beside the rating (Glicko-2 boards)."""
        if self.rd is None:
            return "\u2013"
        return f"{self.rd:.0f} / {self.e.volatility:.5f}"

    @property
    def plus(self) -> float:
        return self.e.ci_upper - self.e.rating

    @property
    def minus(self) -> float:
        return self.e.rating - self.e.ci_lower

    @property
    def rating_display(self) -> str:
        return f"{self.e.rating:.0f}"

    @property
    def ci_display(self) -> str:
        return f"+{self.plus:.0f}/\u2212{self.minus:.0f}"

    @property
    def elo_display(self) -> str:
        return "\u2013" if self.elo is None else f"{self.elo:.0f}"

    @property
    def win_rate_display(self) -> str:
        return f"{self.e.win_rate:.1%}"


@dataclass
class BoardPage:
    """The latest snapshot of a board, filtered, sorted and split for a page or the API."""

    board: Board
    snapshot: BoardSnapshot | None
    query: Query
    rows: list[Row] = field(default_factory=list)
    provisional: list[Row] = field(default_factory=list)
    organizations: list[str] = field(default_factory=list)
    licenses: list[str] = field(default_factory=list)
    entries: dict[str, SnapshotEntry] = field(default_factory=dict)  # all, by subject
    categories: list[CategoryOption] = field(default_factory=list)
    whole_votes: int = 0  # counted votes of the whole board, for the selector's "All"
    failed_run: RatingRun | None = None  # a run failed since the snapshot was written

    @property
    def styled(self) -> bool:
        """The board was fitted with style control too (the switch is offered)."""
        return bool(self.snapshot and self.snapshot.style_coefficients is not None)

    @property
    def style_shown(self) -> bool:
        return self.styled and self.query.style_control

    @property
    def style_coefficients(self) -> list[dict] | None:
        """Each style element's coefficient, and why it is left out when it is."""
        if not self.styled:
            return None
        return [style_coefficient(row) for row in self.snapshot.style_coefficients]

    @property
    def filtered(self) -> bool:
        """A filter (search, organization, license) leaves models out."""
        q = self.query
        return bool(q.search or q.organization or q.license)

    @property
    def links_models(self) -> bool:
        """Its subjects are models of the registry, each with a page."""
        return self.board.subjects is None

    @property
    def glicko(self) -> bool:
        """Rated with Glicko-2: RD and volatility are shown beside the rating."""
        return bool(self.snapshot and self.snapshot.method == "glicko2")

    @property
    def metric_columns(self) -> list[tuple[str, str]]:
        """``(sort, figure)`` of each figure of the board's own (``Board.metrics``)."""
        if self.board.metrics is None:
            return []
        return [(sort, figure) for sort, (figure, _order) in METRIC_SORTS.items()]

    @property
    def method_label(self) -> str:
        if not self.snapshot:
            return ""
        return METHOD_LABELS.get(self.snapshot.method, self.snapshot.method)

    @property
    def ci_label(self) -> str:
        if not self.snapshot:
            return ""
        label = CI_LABELS.get(self.snapshot.ci_method, self.snapshot.ci_method)
        if self.snapshot.ci_method == "bootstrap":
            label += f" ({self.snapshot.bootstrap_rounds} rounds)"
        return label


class QueryError(ValueError):
    pass


def leaderboard_query_clean(
    *,
    board: str | None,
    sort: str | None = None,
    order: str | None = None,
    organization: str | None = None,
    license: str | None = None,
    search: str | None = None,
    include_deprecated: bool = False,
    include_provisional: bool = True,
    style_control: bool = False,
    category: str | None = None,
) -> Query:
    """Validate a request's parameters (raises QueryError / UnknownBoard)."""
    names = [b.name for b in boards()]
    name = board or (names[0] if names else "")
    chosen = get_board(name)
    sort = sort or "rating"
    if sort not in SORTS and sort not in METRIC_SORTS:
        raise QueryError(BAD_SORT.format(value=sort))
    if sort in METRIC_SORTS and chosen.metrics is None:
        having = [b.name for b in boards() if b.metrics is not None]
        raise QueryError(NO_METRIC.format(board=name, value=sort,
                                          names=", ".join(having) or "none"))
    order = order or {**SORTS, **METRIC_SORTS}[sort][1]
    if order not in ORDERS:
        raise QueryError(BAD_ORDER.format(value=order))
    category = (category or "").strip()
    if category and snapshot_latest(board=name, category=category) is None:
        rated = [c.name for c in category_options(board=name) if c.rated]
        raise QueryError(NO_CATEGORY_BOARD.format(
            board=name, value=category[:40], least=settings.ARENA_LEADERBOARD_CATEGORY_MIN_VOTES,
            names=", ".join(rated) or "none yet"))
    return Query(
        board=name,
        sort=sort,
        order=order,
        organization=(organization or "").strip(),
        license=(license or "").strip(),
        search=(search or "").strip()[:100],
        include_deprecated=include_deprecated,
        include_provisional=include_provisional,
        style_control=style_control,
        category=category,
    )


def category_options(*, board: str, whole: BoardSnapshot | None = None) -> list[CategoryOption]:
    """Every category of the board's latest run with its counted votes, most voted first;
    ``rated`` when it has a board of its own."""
    whole = whole or snapshot_latest(board=board)
    if whole is None or not whole.category_votes:
        return []
    rated = set(BoardSnapshot.objects.filter(board=board).exclude(category="")
                .values_list("category", flat=True).distinct())
    votes = whole.category_votes
    return [CategoryOption(name, category_title(name), votes[name], name in rated)
            for name in sorted(votes, key=lambda c: (-votes[c], c))]


def snapshot_latest(*, board: str, category: str = "") -> BoardSnapshot | None:
    """The newest snapshot of ``board`` (of one of its categories with ``category``)."""
    return (
        BoardSnapshot.objects.filter(board=board, category=category)
        .order_by("-created_at", "-id")
        .first()
    )


def board_failed_run(*, board: str, category: str = "",
                     snapshot: BoardSnapshot | None) -> RatingRun | None:
    """The newest run that could not rate this board (``category``: one of its category
    boards) since ``snapshot``, its latest, was written: the board shows that snapshot,
    older than its votes, until a run succeeds."""
    key = f"{board}/{category}" if category else board
    runs = RatingRun.objects.filter(status=RunStatus.FAILED).order_by("-started_at", "-id")
    if snapshot is not None:
        runs = runs.filter(started_at__gte=snapshot.created_at)
    return next((run for run in runs[:50] if key in run.failed_boards), None)


def online_elo_map(*, board: str) -> dict[str, float]:
    return dict(OnlineElo.objects.filter(board=board).values_list("subject", "rating"))


@lru_cache(maxsize=16)
def _snapshot_entries(snapshot_id: int, created_at) -> tuple:
    """A snapshot's entries, best first. Snapshots never change once written, so each
    process reads them once (``created_at`` guards against a reused id). Named tuples,
    not model instances: a fifth of the cost for a 200-model board."""
    return tuple(
        SnapshotEntry.objects.filter(snapshot_id=snapshot_id)
        .order_by("-rating")
        .values_list(*ENTRY_FIELDS, named=True)
    )


def leaderboard_view(*, query: Query) -> BoardPage:
    """The latest snapshot of ``query.board`` for the page, section by section: the category
    selector and a failed run's notice over it, the filters' choices, the table of rated
    entries and the provisional one."""
    whole = snapshot_latest(board=query.board)
    snapshot = snapshot_latest(board=query.board, category=query.category) \
        if query.category else whole
    page = BoardPage(board=get_board(query.board), snapshot=snapshot, query=query,
                     categories=category_options(board=query.board, whole=whole),
                     whole_votes=whole.outcomes if whole else 0,
                     failed_run=board_failed_run(board=query.board, category=query.category,
                                                 snapshot=snapshot))
    if snapshot is None:
        return page
    entries = _snapshot_entries(snapshot.pk, snapshot.created_at)
    if query.style_control and snapshot.style_coefficients is not None:
        entries = tuple(_style_controlled(e) for e in entries)
    page.entries = {e.subject: e for e in entries}
    shown = [e for e in entries if query.include_deprecated or not e.deprecated]
    page.organizations = sorted({e.organization for e in shown if e.organization})
    page.licenses = sorted({e.license for e in shown if e.license})
    rows = _table_rows(shown, query, board_metrics(page.board))
    page.rows = [r for r in rows if not r.e.provisional]
    if query.include_provisional:
        page.provisional = sorted((r for r in rows if r.e.provisional),
                                  key=lambda r: (-r.e.votes, r.e.name))
    return page


def _table_rows(shown: list, query: Query, metrics: dict) -> list[Row]:
    """The entries the filters and the search keep, with their rank, online Elo and the
    board's own figures, in the order asked for (a figure a subject lacks sorts last)."""
    elo = {} if query.category else online_elo_map(board=query.board)
    needle = query.search.casefold()

    def keep(e: SnapshotEntry) -> bool:
        if query.organization and e.organization != query.organization:
            return False
        if query.license and e.license != query.license:
            return False
        return not needle or needle in e.name.casefold() or needle in e.subject.casefold()

    rank_field = "rank_ub" if query.include_deprecated else "rank_ub_active"
    rows = [Row(e, getattr(e, rank_field), elo.get(e.subject), dict(metrics.get(e.subject, {})))
            for e in shown if keep(e)]
    reverse = query.order == "desc"
    if query.sort in METRIC_SORTS:
        figure = METRIC_SORTS[query.sort][0]
        known = [r for r in rows if r.metrics.get(figure) is not None]
        known.sort(key=lambda r: (r.metrics[figure], r.e.rating if reverse else -r.e.rating),
                   reverse=reverse)
        return known + [r for r in rows if r.metrics.get(figure) is None]
    key_field = SORTS[query.sort][0]

    def key(row: Row):
        value = row.elo if key_field == "elo" else getattr(row.e, key_field)
        if isinstance(value, str):
            value = value.casefold()
        # ties: by rating, best first, whatever the direction
        return (value if value is not None else float("-inf"),
                row.e.rating if reverse else -row.e.rating)

    return sorted(rows, key=key, reverse=reverse)


def _style_controlled(e):
    """An entry as the style-controlled fit has it."""
    return e._replace(rating=e.style_rating, ci_lower=e.style_ci_lower,
                      ci_upper=e.style_ci_upper, rank_ub=e.style_rank_ub,
                      rank_ub_active=e.style_rank_ub_active)

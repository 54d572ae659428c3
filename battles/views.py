"""Battle pages and their htmx fragments. Thin: parse, call a service or selector, render."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from arena.contests.flags import voter_of
from arena.contests.human_check import human_check_require
from arena.errors import RuleError, rule_error_response
from arena.selectors import model_list_available
from arena.sessions import session_key_for
from arena.visitors import BATTLE_CREATE, BATTLE_WRITE, visitor_count, visitor_write
from battles import selectors, services, sharing
from battles.cards import battle_card_png
from battles.models import Position

TEMPLATE = "battles/battle.html"
SHARED_TEMPLATE = "battles/shared.html"
# A browser may keep the card this long. Private: a shared cache (the web process's own,
# arena.edge, or a proxy) would go on serving it after the link is revoked; a link preview's
# crawler fetches it once and keeps its own copy anyway.
CARD_MAX_AGE = 300


def _history_changed(response: HttpResponse) -> HttpResponse:
    """Tell the page (and, through it, the visitor's other tabs) to refresh the sidebar."""
    response["HX-Trigger"] = "arena-history"
    return response


def _context(request: HttpRequest, *, thread=None, **extra) -> dict:
    """The page's sidebar: the visitor's sessions, and the battles of the one shown."""
    key = session_key_for(request, create=False)
    view = extra.get("view")
    if thread is None and view is not None and view.battle.session_key == key:
        thread = view.battle.thread
    threads, _ = selectors.thread_list_for_session(session_key=key)
    return {
        "history": threads,
        "thread": thread,
        "thread_battles": selectors.thread_battle_summaries(thread=thread) if thread else [],
        "current_battle_id": view.battle.id if view is not None else None,
        **extra,
    }


def _viewable(request: HttpRequest, battle_id) -> selectors.BattleView:
    battle = selectors.battle_visible(
        battle_id=battle_id, session_key=session_key_for(request, create=False)
    )
    if battle is None:
        raise Http404("battle not found")
    return selectors.battle_view(battle=battle)


def _owned(request: HttpRequest, battle_id):
    battle = selectors.battle_owned(
        battle_id=battle_id, session_key=session_key_for(request, create=False), whole=True
    )
    if battle is None:
        raise Http404("battle not found")
    return battle


def _error(request: HttpRequest, exc: RuleError) -> HttpResponse:
    return rule_error_response(request, exc, template=TEMPLATE)


def _with_turn(battle, turn) -> tuple[selectors.BattleView, selectors.TurnView]:
    """The battle as it is now, and the view of one of its turns."""
    view = selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))
    return view, next(t for t in view.turns if t.turn.id == turn.id)


def _start(request: HttpRequest, thread=None):
    """Start a battle from the posted prompt (in ``thread``, else in a new session)."""
    prompt = request.POST.get("prompt", "")
    try:
        battle, _ = visitor_write(request, lambda key: services.battle_create(
            session_key=key, prompt=prompt, thread=thread), BATTLE_CREATE)
    except RuleError as exc:
        return rule_error_response(request, exc, template=TEMPLATE,
                                   context=_context(request, thread=thread, prompt=prompt))
    url = f"/battle/{battle.id}/"
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _new_battle_page(request: HttpRequest, thread=None):
    notice = services.NOT_ENOUGH_MODELS if len(model_list_available()) < 2 else None
    return render(request, TEMPLATE, _context(request, thread=thread, view=None, notice=notice))


def battle_new(request: HttpRequest):
    if request.method == "POST":
        return _start(request)
    return _new_battle_page(request)


@require_http_methods(["GET", "POST"])
def thread_detail(request: HttpRequest, thread_id):
    """A session: its latest battle; an empty one offers its first. POST: its next battle."""
    thread = selectors.thread_owned(
        thread_id=thread_id, session_key=session_key_for(request, create=False))
    if thread is None:
        raise Http404("session not found")
    if request.method == "POST":
        return _start(request, thread)
    latest = thread.battles.order_by("-created_at", "-id").first()
    if latest is not None:
        return redirect(f"/battle/{latest.id}/")
    return _new_battle_page(request, thread)


@require_GET
def battle_detail(request: HttpRequest, battle_id):
    view = _viewable(request, battle_id)
    key = session_key_for(request, create=False)
    is_owner = bool(key) and view.battle.session_key == key
    return render(request, TEMPLATE, _context(request, view=view, is_owner=is_owner))


@require_POST
def battle_follow_up_form(request: HttpRequest, battle_id):
    battle = _owned(request, battle_id)
    try:
        visitor_count(request, BATTLE_WRITE)
        turn = services.battle_follow_up(battle=battle, prompt=request.POST.get("prompt", ""))
    except RuleError as exc:
        return _error(request, exc)
    view, turn_view = _with_turn(battle, turn)
    return _history_changed(render(request, f"{TEMPLATE}#new-turn",
                                   {"view": view, "t": turn_view, "is_owner": True}))


@require_POST
def battle_vote_form(request: HttpRequest, battle_id):
    battle = _owned(request, battle_id)
    try:
        visitor_count(request, BATTLE_WRITE)
        human_check_require(request, session_key=battle.session_key)
        services.battle_vote(battle_id=battle.id, session_key=battle.session_key,
                             choice=request.POST.get("vote", ""), voter=voter_of(request),
                             publish_text=request.POST.get("publish_text") == "1")
    except RuleError as exc:
        return _error(request, exc)
    view = selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))
    # The sidebar's "voted" mark follows at once (it refreshes on the trigger), not on reload.
    return _history_changed(render(request, f"{TEMPLATE}#after-vote",
                                   {"view": view, "is_owner": True}))


@require_POST
def battle_retry_form(request: HttpRequest, battle_id, position: str):
    battle = _owned(request, battle_id)
    if position not in Position.values:
        raise Http404("no such side")
    try:
        visitor_count(request, BATTLE_WRITE)
        response = services.response_retry(battle=battle, position=position)
    except RuleError as exc:
        return _error(request, exc)
    # The side starts over and the controls with it ("Both are bad" closes until it ends).
    return render(request, f"{TEMPLATE}#retried",
                  {"side": selectors.SideView(position, response), "is_owner": True,
                   "view": selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))})


@require_POST
def battle_regenerate_form(request: HttpRequest, battle_id):
    """Both answers of the latest message written again: the turn is swapped for its new,
    streaming answers, with the controls."""
    return _turn_action(request, battle_id, services.battle_regenerate, "new-turn")


def _turn_action(request: HttpRequest, battle_id, action, fragment: str) -> HttpResponse:
    """The owner's ``action`` on the battle's latest turn, answered with the turn's
    ``fragment`` (or the error)."""
    battle = _owned(request, battle_id)
    try:
        visitor_count(request, BATTLE_WRITE)
        turn = action(battle=battle)
    except RuleError as exc:
        return _error(request, exc)
    view, turn_view = _with_turn(battle, turn)
    return render(request, f"{TEMPLATE}#{fragment}", {"view": view, "t": turn_view,
                                                     "is_owner": True})


def _share_box(request: HttpRequest, battle, share_action) -> HttpResponse:
    try:
        visitor_count(request, BATTLE_WRITE)
        share_action(battle=battle)
    except RuleError as exc:
        return _error(request, exc)
    view = selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))
    return render(request, f"{TEMPLATE}#share-box", {"view": view, "is_owner": True})


@require_POST
def battle_share_form(request: HttpRequest, battle_id):
    return _share_box(request, _owned(request, battle_id), sharing.battle_share)


@require_POST
def battle_unshare_form(request: HttpRequest, battle_id):
    return _share_box(request, _owned(request, battle_id), sharing.battle_unshare)


def _shared(token: str) -> selectors.BattleView:
    found = selectors.shared_battle_view(token=token)
    if found is None:
        raise Http404("no such shared battle")
    return found[1]


@require_GET
def shared_detail(request: HttpRequest, token: str):
    """A shared battle, read-only, for anyone with the link."""
    return render(request, SHARED_TEMPLATE, {"view": _shared(token)})


@require_GET
@cache_control(private=True, max_age=CARD_MAX_AGE)
def shared_card(request: HttpRequest, token: str):
    """The shared battle's image card, a PNG (the page's og:image)."""
    return HttpResponse(battle_card_png(_shared(token)), content_type="image/png")


@require_POST
def battle_stop_form(request: HttpRequest, battle_id):
    return _turn_action(request, battle_id, services.battle_stop, "stopped")


@require_GET
def battle_side(request: HttpRequest, battle_id, response_id):
    view = _viewable(request, battle_id)
    for t in view.turns:
        for side in t.sides:
            if str(side.response.id) == str(response_id):
                return render(request, f"{TEMPLATE}#side", {"side": side, "view": view,
                                                           "is_owner": True})
    raise Http404("no such answer")


@require_GET
def battle_controls(request: HttpRequest, battle_id):
    view = _viewable(request, battle_id)
    key = session_key_for(request, create=False)
    return render(request, f"{TEMPLATE}#controls",
                  {"view": view, "is_owner": view.battle.session_key == key})


@require_GET
def battle_history(request: HttpRequest):
    """The sidebar alone (it refreshes itself); ``?battle=`` or ``?session=`` names what the
    page shows."""
    key = session_key_for(request, create=False)
    battle = selectors.battle_owned(battle_id=request.GET.get("battle", ""), session_key=key,
                                    whole=True)
    thread = battle.thread if battle else selectors.thread_owned(
        thread_id=request.GET.get("session", ""), session_key=key)
    context = _context(request, thread=thread)
    context["current_battle_id"] = battle.id if battle else None
    return render(request, f"{TEMPLATE}#history", context)

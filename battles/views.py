"""Battle pages and their htmx fragments. Thin: parse, call a service or selector, render."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from arena.ratelimit import RateLimited
from arena.sessions import session_key_for
from battles import selectors, services
from battles.models import Position
from battles.services import BattleError

TEMPLATE = "battles/battle.html"


def _context(request: HttpRequest, **extra) -> dict:
    key = session_key_for(request, create=False)
    return {
        "history": selectors.battle_list_for_session(session_key=key),
        "max_prompt_chars": settings.ARENA_PROMPT_MAX_CHARS,
        **extra,
    }


def _viewable(request: HttpRequest, battle_id) -> selectors.BattleView:
    battle = selectors.battle_for_viewer(
        battle_id=battle_id, session_key=session_key_for(request, create=False)
    )
    if battle is None:
        raise Http404("battle not found")
    return selectors.battle_view(battle=battle)


def _owned(request: HttpRequest, battle_id):
    battle = selectors.battle_for_owner(
        battle_id=battle_id, session_key=session_key_for(request, create=False)
    )
    if battle is None:
        raise Http404("battle not found")
    return battle


def _error(request: HttpRequest, message: str, status: int = 400) -> HttpResponse:
    return render(request, f"{TEMPLATE}#error", {"error": message}, status=status)


def battle_new(request: HttpRequest):
    if request.method == "POST":
        try:
            battle, _ = services.battle_create(
                session_key=session_key_for(request), prompt=request.POST.get("prompt", "")
            )
        except (BattleError, RateLimited) as exc:
            message = exc.message if isinstance(exc, BattleError) else str(exc)
            if request.htmx:
                return _error(request, message, getattr(exc, "status", 429))
            ctx = _context(request, error=message, prompt=request.POST.get("prompt", ""))
            return render(request, TEMPLATE, ctx, status=getattr(exc, "status", 429))
        url = f"/battle/{battle.id}/"
        return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    from arena.selectors import model_list_available

    notice = services.NOT_ENOUGH_MODELS if len(model_list_available()) < 2 else None
    return render(request, TEMPLATE, _context(request, view=None, notice=notice))


@require_GET
def battle_detail(request: HttpRequest, battle_id):
    view = _viewable(request, battle_id)
    key = session_key_for(request, create=False)
    is_owner = bool(key) and view.battle.session_key == key
    return render(request, TEMPLATE, _context(request, view=view, is_owner=is_owner))


@require_POST
def battle_follow_up(request: HttpRequest, battle_id):
    battle = _owned(request, battle_id)
    try:
        turn = services.battle_follow_up(battle=battle, prompt=request.POST.get("prompt", ""))
    except BattleError as exc:
        return _error(request, exc.message, exc.status)
    view = selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))
    turn_view = next(t for t in view.turns if t.turn.id == turn.id)
    return render(request, f"{TEMPLATE}#new-turn", {"view": view, "t": turn_view,
                                                    "is_owner": True})


@require_POST
def battle_vote(request: HttpRequest, battle_id):
    battle = _owned(request, battle_id)
    try:
        services.battle_vote(battle=battle, choice=request.POST.get("vote", ""))
    except BattleError as exc:
        return _error(request, exc.message, exc.status)
    view = selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))
    return render(request, f"{TEMPLATE}#after-vote", {"view": view, "is_owner": True})


@require_POST
def battle_retry(request: HttpRequest, battle_id, position: str):
    battle = _owned(request, battle_id)
    if position not in Position.values:
        raise Http404("no such side")
    try:
        response = services.response_retry(battle=battle, position=position)
    except BattleError as exc:
        return _error(request, exc.message, exc.status)
    return render(request, f"{TEMPLATE}#side",
                  {"side": selectors.SideView(position, response), "is_owner": True,
                   "view": selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))})


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
    return render(request, f"{TEMPLATE}#history", _context(request))

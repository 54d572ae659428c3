"""Regenerate both answers before the vote; share a voted battle. Thin: parse, call, shape.

``POST /api/battles/{id}/regenerate`` answers as a follow-up does (seed 000's turn shape),
once both new answers exist. ``POST /api/battles/{id}/share`` gives the public link and its
image card; ``GET /api/shares/{token}`` is the public JSON of a shared battle: what its page
shows, with no battle or session id (a revoked link leads nowhere).
"""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from ninja import Router, Schema, Status

from arena.api_errors import errors
from arena.errors import RuleError
from arena.visitors import BATTLE_WRITE, avisitor_read, avisitor_write
from battles import selectors, services, sharing
from battles.api.battles import WRITE_ERRORS, TurnOut, answer_turn, owned_battle

router = Router(tags=["battles"])

SHARE_LINK_NOT_FOUND = "No shared battle has this link (it may have been revoked)."


class ShareOut(Schema):
    battle_id: str
    url: str
    image_url: str


class SharedModelOut(Schema):
    model_id: str
    name: str
    organization: str
    latency_ms: int
    output_tokens: int


class SharedResponseOut(Schema):
    position: str
    text: str
    status: str
    error: str | None
    cut_at_limit: bool
    stopped: bool


class SharedMessageOut(Schema):
    index: int
    prompt: str
    responses: list[SharedResponseOut]


class SharedBattleOut(Schema):
    url: str
    image_url: str
    title: str
    created_at: datetime
    vote: str
    revealed_models: dict[str, SharedModelOut]
    messages: list[SharedMessageOut]


def _links(request: HttpRequest, share) -> dict[str, str]:
    return {name: request.build_absolute_uri(path)
            for name, path in sharing.share_paths(share).items()}


@router.post("/battles/{battle_id}/regenerate", response={200: TurnOut, **WRITE_ERRORS})
async def regenerate(request: HttpRequest, battle_id: str):
    """Write both answers of the latest message again (same models, same positions), before
    the vote; the answers replaced are kept but never shown. 409 once voted, while an answer
    is being written, or past ``ARENA_BATTLE_REGENERATIONS`` for the message."""
    def act(key):
        return services.battle_regenerate(battle=owned_battle(battle_id, key))

    turn = await avisitor_write(request, act, BATTLE_WRITE)
    return await answer_turn(turn.battle_id, turn.id)


@router.post("/battles/{battle_id}/share", response={200: ShareOut, **errors(404, 409, 429, 503)})
async def share(request: HttpRequest, battle_id: str):
    """The voted battle's public link and image card (the same link until it is revoked)."""
    def act(key):
        made = sharing.battle_share(battle=owned_battle(battle_id, key))
        return {"battle_id": str(made.battle_id), **_links(request, made)}

    return await avisitor_write(request, act, BATTLE_WRITE)


@router.delete("/battles/{battle_id}/share", response={204: None, **errors(404, 429, 503)})
async def unshare(request: HttpRequest, battle_id: str):
    """Revoke the public link: its page, card and JSON answer 404 from now on."""
    def act(key):
        sharing.battle_unshare(battle=owned_battle(battle_id, key))

    await avisitor_write(request, act, BATTLE_WRITE)
    return Status(204, None)


@router.get("/shares/{token}", response={200: SharedBattleOut, **errors(404)})
async def shared_battle(request: HttpRequest, token: str):
    """A shared battle, for anyone with its link: prompts, answers, who was who, the vote."""
    def act(_key):
        found = selectors.shared_battle_view(token=token)
        if found is None:
            raise RuleError(SHARE_LINK_NOT_FOUND, status=404)
        share, view = found
        return shared_payload(view, _links(request, share))

    return await avisitor_read(request, act)


def shared_payload(view: selectors.BattleView, links: dict[str, str]) -> dict:
    totals = selectors.battle_totals(view)
    return {
        **links,
        "title": view.battle.title,
        "created_at": view.battle.created_at,
        "vote": view.vote.choice,
        "revealed_models": {
            position: {"model_id": model.slug, "name": model.name,
                       "organization": model.organization,
                       "latency_ms": totals[position]["latency_ms"],
                       "output_tokens": totals[position]["output_tokens"]}
            for position, model in view.revealed.items()},
        "messages": [
            {"index": t.turn.index, "prompt": t.turn.prompt,
             "responses": [{"position": s.position, "text": s.response.text,
                            "status": s.response.status, "error": s.response.error or None,
                            "cut_at_limit": s.response.cut_at_limit,
                            "stopped": s.response.stopped} for s in t.sides]}
            for t in view.turns],
    }

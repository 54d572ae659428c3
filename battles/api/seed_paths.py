"""Seed 001's own paths beside the arena's: a session's battles at
``GET /api/battles/session/{sid}`` in lmarena-clone's shape, and ``POST /api/votes``.

Thin: the same selectors and the same vote service as ``GET /api/sessions/{id}/battles``
and ``POST /api/battles/{id}/vote``, in the shapes lmarena-clone's clients read. Blind as
they are: an unvoted battle names no model and shows no side's timing.
"""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from ninja import Field, Router, Schema

from arena.steps import StepStatus
from arena.visitors import avisitor_read, found_or_404
from battles import selectors
from battles.api.battles import READ_ERRORS, VOTE_ERRORS, VoteIn, VoteOut, cast_vote
from battles.api.sessions import SESSION_NOT_FOUND
from battles.models import Position

router = Router(tags=["seed 001"])

ONGOING = "ongoing"
VOTED = "voted"


class SeedMessageOut(Schema):
    role: str = Field(json_schema_extra={"enum": ["user", "assistant"]})
    content: str
    timestamp: datetime
    position: str | None = Field(
        None, description="An answer's side (left or right); null for the prompt.",
        json_schema_extra={"enum": [*Position.values, None]})
    status: str | None = Field(
        None, description="An answer's state (pending, running, done, failed); null for the "
                          "prompt.", json_schema_extra={"enum": [*StepStatus.values, None]})
    model_id: str | None = Field(None, description="Who wrote the answer; null until the vote.")
    latency_ms: int | None = Field(
        None, description="Milliseconds the answer took; null until the vote.")


class SeedBattleOut(Schema):
    battle_id: str
    left_model_id: str | None = Field(description="Null until the battle is voted.")
    right_model_id: str | None = Field(description="Null until the battle is voted.")
    conversation: list[SeedMessageOut]
    status: str = Field(json_schema_extra={"enum": [ONGOING, VOTED]})
    vote: str | None
    created_at: datetime


class SeedSessionBattlesOut(Schema):
    session_id: str
    battles: list[SeedBattleOut]


class SeedVoteIn(VoteIn):
    battle_id: str


def _conversation(view: selectors.BattleView) -> list[dict]:
    revealed = view.revealed
    messages = []
    for turn in view.turns:
        # Every message of a turn carries the turn's time: an answer's own end would time it.
        at = turn.turn.created_at
        messages.append({"role": "user", "content": turn.turn.prompt, "timestamp": at})
        messages += [
            {"role": "assistant", "content": side.response.text, "timestamp": at,
             "position": side.position, "status": side.response.status,
             "model_id": revealed[side.position].slug if revealed else None,
             "latency_ms": side.response.latency_ms if revealed else None}
            for side in turn.sides
        ]
    return messages


def seed_battle(view: selectors.BattleView) -> dict:
    """A battle as lmarena-clone lists a session's battles; anonymous until it is voted."""
    revealed = view.revealed
    return {
        "battle_id": str(view.battle.id),
        "left_model_id": revealed["left"].slug if revealed else None,
        "right_model_id": revealed["right"].slug if revealed else None,
        "conversation": _conversation(view),
        "status": VOTED if view.vote else ONGOING,
        "vote": view.vote.choice if view.vote else None,
        "created_at": view.battle.created_at,
    }


@router.get("/battles/session/{sid}", response={200: SeedSessionBattlesOut, **READ_ERRORS})
async def list_battles_of_session(request: HttpRequest, sid: str):
    """Seed 001's list of a session's battles, first to last, as a conversation each; only
    the caller's own session (else 404), each battle anonymous until its own vote."""
    def act(key):
        thread = found_or_404(selectors.thread_owned(thread_id=sid, session_key=key),
                              SESSION_NOT_FOUND)
        return {"session_id": str(thread.id), "battles": [
            seed_battle(selectors.battle_view(battle=b))
            for b in selectors.thread_battles(thread=thread)]}

    return await avisitor_read(request, act)


@router.post("/votes", response={200: VoteOut, **VOTE_ERRORS})
async def submit_vote(request: HttpRequest, payload: SeedVoteIn):
    """Seed 001's vote: ``POST /api/battles/{battle_id}/vote`` with the battle in the body.
    Once per battle (409 after), only on the caller's own battle (else 404), once both
    answers exist; answers who was who."""
    return await cast_vote(request, payload.battle_id, payload)

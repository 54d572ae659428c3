"""The text-battle JSON API in seed 000's shapes. Thin: parse, call a service, shape.

POST endpoints wait until both answers exist and answer once. Nothing that
names a model is in any answer before the vote.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, Router, Schema

from arena.aio import database_call
from arena.api_errors import errors
from arena.contests.flags import voter_of
from arena.contests.human_check import human_check_require
from arena.contests.voting import VoteChoice
from arena.errors import RuleError
from arena.steps import StepStatus
from arena.visitors import (
    BATTLE_CREATE,
    BATTLE_WRITE,
    avisitor_read,
    avisitor_write,
    found_or_404,
)
from battles import selectors, services
from battles.models import Position
from battles.waiting import turn_wait_finished

router = Router(tags=["battles"])

NOT_FOUND = services.BATTLE_NOT_FOUND
STILL_WRITING = (
    "The answers are still being written after {seconds:.0f} s. Nothing is lost: "
    "GET /api/battles/{battle_id} shows them when they are done."
)
SIDE_FAILED = (
    "The {positions} answer failed: {error} Retry it with "
    "POST /api/battles/{battle_id}/retry {{\"position\": \"{position}\"}}."
)


class PromptIn(Schema):
    # The server's own rule (400 for an empty or blank prompt) is documented as minLength.
    prompt: str = Field(json_schema_extra={"minLength": 1})


class VoteIn(Schema):
    vote: str = Field(json_schema_extra={"enum": list(VoteChoice.values)})
    publish_text: bool = Field(False, description="The voter lets this battle's prompts and "
                               "answers be published in the open data releases (redacted).")


class RetryIn(Schema):
    position: Position


# A side's timing tells models apart (a fingerprint): only a voted battle shows it.
LATENCY = Field(description="Milliseconds the answer took; null until the battle is voted.")


class ResponseOut(Schema):
    position: str
    text: str
    latency_ms: int | None = LATENCY
    cut_at_limit: bool = False  # the provider stopped it at the model's max_tokens
    stopped: bool = False  # the person stopped it; the text is what was written by then


class TurnOut(Schema):
    battle_id: str
    session_id: str
    message_id: str
    responses: list[ResponseOut]


class RevealedOut(Schema):
    left: str
    right: str


class VoteOut(Schema):
    battle_id: str
    vote: str
    revealed_models: RevealedOut


class MessageOut(Schema):
    message_id: str
    prompt: str
    responses: list[dict]


class BattleOut(Schema):
    battle_id: str
    session_id: str
    title: str
    created_at: datetime
    last_active_at: datetime
    message_count: int
    max_messages: int
    status: str
    vote: str | None
    revealed_models: dict | None
    messages: list[MessageOut]


class BattleSummaryOut(Schema):
    battle_id: str
    session_id: str
    title: str
    last_active_at: datetime
    message_count: int
    status: str


class BattleListOut(Schema):
    battles: list[BattleSummaryOut]


# What each kind of operation can answer besides 200 (documented in the OpenAPI file).
READ_ERRORS = errors(404, 422)
WRITE_ERRORS = errors(400, 404, 409, 413, 422, 429, 502, 503, 504)
VOTE_ERRORS = {**WRITE_ERRORS, **errors(428)}  # the human check (arena.contests.human_check)


def owned_battle(battle_id, session_key) -> object:
    """The visitor's own battle, or a 404 (every write on a battle, here and in share.py)."""
    return found_or_404(selectors.battle_owned(battle_id=battle_id, session_key=session_key),
                        NOT_FOUND)


def _turn_payload(battle_id, turn_id, answers: list[selectors.TurnAnswer]) -> dict:
    failed = [a for a in answers if a.status == StepStatus.FAILED]
    if failed:
        raise RuleError(status=502, message=SIDE_FAILED.format(
            positions=" and ".join(a.position for a in failed),
            error=failed[0].error,
            battle_id=battle_id,
            position=failed[0].position,
        ))
    return {
        "battle_id": str(battle_id),
        "session_id": answers[0].session_id,
        "message_id": str(turn_id),
        "responses": [
            {"position": a.position, "text": a.text, "latency_ms": None,  # before the vote
             "cut_at_limit": a.cut_at_limit, "stopped": a.stopped}
            for a in answers
        ],
    }


async def answer_turn(battle_id, turn_id) -> dict:
    timeout = settings.ARENA_API_WAIT_SECONDS
    answers = await turn_wait_finished(battle_id=battle_id, turn_id=turn_id, timeout=timeout)
    if answers is None:
        raise RuleError(STILL_WRITING.format(seconds=timeout, battle_id=battle_id), status=504)
    return _turn_payload(battle_id, turn_id, answers)


@router.post("/battles", response={200: TurnOut, **WRITE_ERRORS})
async def create_battle(request: HttpRequest, payload: PromptIn):
    """Start a battle: two anonymous models answer the prompt; both answers, by position."""
    battle, turn = await avisitor_write(
        request, lambda key: services.battle_create(session_key=key, prompt=payload.prompt),
        BATTLE_CREATE,
    )
    return await answer_turn(battle.id, turn.id)


@router.post("/battles/{battle_id}/messages", response={200: TurnOut, **WRITE_ERRORS})
async def follow_up(request: HttpRequest, battle_id: str, payload: PromptIn):
    def act(key):
        return services.battle_follow_up(battle=owned_battle(battle_id, key), prompt=payload.prompt)

    turn = await avisitor_write(request, act, BATTLE_WRITE)
    return await answer_turn(turn.battle_id, turn.id)


@router.post("/battles/{battle_id}/retry", response={200: TurnOut, **WRITE_ERRORS})
async def retry_side(request: HttpRequest, battle_id: str, payload: RetryIn):
    def act(key):
        return services.response_retry(battle=owned_battle(battle_id, key),
                                       position=payload.position)

    response = await avisitor_write(request, act, BATTLE_WRITE)
    return await answer_turn(response.turn.battle_id, response.turn_id)


@router.post("/battles/{battle_id}/stop", response={200: TurnOut, **WRITE_ERRORS})
async def stop(request: HttpRequest, battle_id: str):
    """Stop the latest answers still being written; both as far as they got (``stopped``)."""
    def act(key):
        return services.battle_stop(battle=owned_battle(battle_id, key))

    turn = await avisitor_write(request, act, BATTLE_WRITE)
    answers = await database_call(selectors.turn_answers)(turn_id=turn.id)
    return _turn_payload(turn.battle_id, turn.id, answers)


async def cast_vote(request: HttpRequest, battle_id: str, payload: VoteIn) -> dict:
    """The caller's vote on their battle, and who was who: every vote path's one way in."""
    voter = voter_of(request)

    def act(key):
        human_check_require(request, session_key=key)
        battle = services.battle_vote(battle_id=battle_id, session_key=key, choice=payload.vote,
                                      voter=voter, publish_text=payload.publish_text).battle
        return {
            "battle_id": str(battle.id),
            "vote": payload.vote,
            "revealed_models": {position: battle.model_in(battle.slot_at(position)).slug
                                for position in (Position.LEFT, Position.RIGHT)},
        }

    return await avisitor_write(request, act, BATTLE_WRITE)


@router.post("/battles/{battle_id}/vote", response={200: VoteOut, **VOTE_ERRORS})
async def vote(request: HttpRequest, battle_id: str, payload: VoteIn):
    return await cast_vote(request, battle_id, payload)


@router.get("/battles/{battle_id}", response={200: BattleOut, **READ_ERRORS})
async def get_battle(request: HttpRequest, battle_id: str):
    def act(key):
        battle = selectors.battle_visible(battle_id=battle_id, session_key=key)
        if battle is None:
            raise RuleError(NOT_FOUND, status=404)
        return battle_payload(selectors.battle_view(battle=battle))

    return await avisitor_read(request, act)


@router.get("/battles", response=BattleListOut)
async def list_battles(request: HttpRequest):
    def act(key):
        return {"battles": [battle_summary(b) for b in
                            selectors.battle_list_for_session(session_key=key)]}

    return await avisitor_read(request, act)


def battle_summary(battle) -> dict:
    """One line of a list of battles (annotated with ``message_count``): never who fought."""
    return {
        "battle_id": str(battle.id),
        "session_id": str(battle.thread_id),
        "title": battle.title,
        "last_active_at": battle.last_active_at,
        "message_count": battle.message_count,
        "status": "voted" if selectors.battle_vote_of(battle) else "open",
    }


def battle_payload(view: selectors.BattleView) -> dict:
    """A battle as JSON: anonymous (positions only) until it is voted."""
    revealed = view.revealed
    totals = selectors.battle_totals(view) if revealed else None
    return {
        "battle_id": str(view.battle.id),
        "session_id": str(view.battle.thread_id),
        "title": view.battle.title,
        "created_at": view.battle.created_at,
        "last_active_at": view.battle.last_active_at,
        "message_count": view.message_count,
        "max_messages": view.max_messages,
        "status": "voted" if view.vote else "open",
        "vote": view.vote.choice if view.vote else None,
        "revealed_models": {
            position: {"model_id": model.slug, "name": model.name,
                       "organization": model.organization, **totals[position]}
            for position, model in revealed.items()
        } if revealed else None,
        "messages": [
            {
                "message_id": str(t.turn.id),
                "prompt": t.turn.prompt,
                "responses": [
                    {"position": s.position, "text": s.response.text,
                     "latency_ms": s.response.latency_ms if revealed else None,
                     "status": s.response.status,
                     "error": s.response.error or None, "cut_at_limit": s.response.cut_at_limit,
                     "stopped": s.response.stopped}
                    for s in t.sides
                ],
            }
            for t in view.turns
        ],
    }

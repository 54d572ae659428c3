"""Sessions in seed 001's shapes: a visitor's threads of battles. Thin: parse, call, shape.

A session is its visitor's own: anyone else gets 404. Its battles are shown as
``GET /api/battles/{id}`` shows them, anonymous until each one's own vote. The visitor is
named by an opaque ``user_id`` (:mod:`battles.users`), which only finds the caller's own.
"""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status

from arena.errors import RuleError
from arena.visitors import (
    BATTLE_CREATE,
    BATTLE_WRITE,
    avisitor_read,
    avisitor_write,
    found_or_404,
)
from battles import selectors, services, threads, users
from battles.api.battles import (
    READ_ERRORS,
    WRITE_ERRORS,
    BattleOut,
    BattleSummaryOut,
    PromptIn,
    ResponseOut,
    TurnOut,
    answer_turn,
    battle_payload,
    battle_summary,
)

router = Router(tags=["sessions"])

SESSION_NOT_FOUND = "Session not found."
USER_NOT_FOUND = "User not found."


class SessionIn(Schema):
    title: str = Field("", json_schema_extra={"maxLength": services.TITLE_LIMIT})
    # The server's own rule (400 for an empty or blank prompt) is documented as minLength.
    prompt: str | None = Field(
        None, description="Given, the session's first battle starts with it (seed 001).",
        json_schema_extra={"minLength": 1})


# Past a 64-bit integer no database takes an OFFSET (a 500 on PostgreSQL and SQLite); no
# visitor has two billion sessions.
MAX_OFFSET = 2**31 - 1


class PageIn(Schema):
    limit: int = Field(20, ge=1, le=100)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class SessionOut(Schema):
    session_id: str
    title: str
    created_at: datetime
    last_active_at: datetime
    battle_count: int


class SessionCreatedOut(SessionOut):
    user_id: str = Field(description="The caller's own id for GET /api/sessions/user/{user_id}.")
    battle_id: str | None = Field(description="The first battle's, when a prompt was given.")
    message_id: str | None = Field(description="The first prompt's, when one was given.")
    responses: list[ResponseOut] = Field(
        description="Both answers to the prompt by position, complete; none without a prompt.")


class SessionDetailOut(SessionOut):
    battles: list[BattleSummaryOut]


class SessionListOut(Schema):
    user_id: str | None = Field(
        description="The caller's own id for GET /api/sessions/user/{user_id}; null until "
                    "the caller's first write.")
    sessions: list[SessionOut]
    count: int
    total: int = Field(description="The same as count (lmarena-clone's name).")
    limit: int
    offset: int


class SessionBattlesOut(Schema):
    session_id: str
    battles: list[BattleOut]


def _session_out(thread, battle_count: int) -> dict:
    return {"session_id": str(thread.id), "title": thread.title,
            "created_at": thread.created_at, "last_active_at": thread.last_active_at,
            "battle_count": battle_count}


def _own(thread_id, key):
    return found_or_404(selectors.thread_owned(thread_id=thread_id, session_key=key),
                        SESSION_NOT_FOUND)


def _session_page(key, page: PageIn) -> dict:
    found, count = selectors.thread_list_for_session(
        session_key=key, limit=page.limit, offset=page.offset)
    return {"user_id": users.user_id_of(session_key=key),
            "sessions": [_session_out(t, t.battle_count) for t in found],
            "count": count, "total": count, "limit": page.limit, "offset": page.offset}


@router.post("/sessions", response={201: SessionCreatedOut, **WRITE_ERRORS})
async def create_session(request: HttpRequest, payload: SessionIn):
    """Start a session; with a prompt, its first battle too (seed 001): both answers by
    position once they are written, as ``POST /api/battles`` answers. Without a title, the
    first battle's prompt names it."""
    def act(key):
        started = threads.thread_start(session_key=key, title=payload.title,
                                       prompt=payload.prompt)
        return started, users.user_id_of(session_key=key)

    started, user_id = await avisitor_write(
        request, act, BATTLE_WRITE if payload.prompt is None else BATTLE_CREATE)
    created = {**_session_out(started.thread, 0 if started.battle is None else 1),
               "user_id": user_id, "battle_id": None, "message_id": None, "responses": []}
    if started.battle is not None:
        created.update(await answer_turn(started.battle.id, started.turn.id))
    return Status(201, created)


@router.get("/sessions", response=SessionListOut)
async def list_sessions(request: HttpRequest, page: Query[PageIn]):
    """The caller's sessions, latest activity first, a page at a time, and the caller's
    ``user_id``."""
    return await avisitor_read(request, lambda key: _session_page(key, page))


@router.get("/sessions/user/{user_id}", response={200: SessionListOut, **READ_ERRORS})
async def list_user_sessions(request: HttpRequest, user_id: str, page: Query[PageIn]):
    """Seed 001's list of a user's sessions: ``GET /api/sessions`` for the caller's own
    ``user_id``; any other id (another visitor's, or none) is not found."""
    def act(key):
        if not users.user_id_is(user_id=user_id, session_key=key):
            raise RuleError(USER_NOT_FOUND, status=404)
        return _session_page(key, page)

    return await avisitor_read(request, act)


@router.get("/sessions/{session_id}", response={200: SessionDetailOut, **READ_ERRORS})
async def get_session(request: HttpRequest, session_id: str):
    """One of the caller's sessions with a line per battle (no model names in any)."""
    def act(key):
        thread = _own(session_id, key)
        battles = selectors.thread_battle_summaries(thread=thread)
        return {**_session_out(thread, len(battles)),
                "battles": [battle_summary(b) for b in battles]}

    return await avisitor_read(request, act)


@router.get("/sessions/{session_id}/battles", response={200: SessionBattlesOut, **READ_ERRORS})
async def list_session_battles(request: HttpRequest, session_id: str):
    """Every battle of the session in full, first to last; each anonymous until its vote."""
    def act(key):
        thread = _own(session_id, key)
        return {"session_id": str(thread.id), "battles": [
            battle_payload(selectors.battle_view(battle=b))
            for b in selectors.thread_battles(thread=thread)]}

    return await avisitor_read(request, act)


@router.post("/sessions/{session_id}/battles", response={200: TurnOut, **WRITE_ERRORS})
async def create_session_battle(request: HttpRequest, session_id: str, payload: PromptIn):
    """A new battle in the session: two newly drawn models answer; both answers, by position."""
    def act(key):
        return services.battle_create(session_key=key, prompt=payload.prompt,
                                      thread=_own(session_id, key))

    battle, turn = await avisitor_write(request, act, BATTLE_CREATE)
    return await answer_turn(battle.id, turn.id)

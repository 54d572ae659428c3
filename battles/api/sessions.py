"""Sessions in seed 001's shapes: a visitor's threads of battles. Thin: parse, call, shape.

A session is its visitor's own: anyone else gets 404. Its battles are shown as
``GET /api/battles/{id}`` shows them, anonymous until each one's own vote.
"""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status

from arena.visitors import (
    BATTLE_CREATE,
    BATTLE_WRITE,
    avisitor_read,
    avisitor_write,
    found_or_404,
)
from battles import selectors, services
from battles.api.battles import (
    READ_ERRORS,
    WRITE_ERRORS,
    BattleOut,
    BattleSummaryOut,
    PromptIn,
    TurnOut,
    answer_turn,
    battle_payload,
    battle_summary,
)

router = Router(tags=["sessions"])

SESSION_NOT_FOUND = "Session not found."


class SessionIn(Schema):
    title: str = Field("", json_schema_extra={"maxLength": services.TITLE_LIMIT})


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


class SessionDetailOut(SessionOut):
    battles: list[BattleSummaryOut]


class SessionListOut(Schema):
    sessions: list[SessionOut]
    count: int
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


@router.post("/sessions", response={201: SessionOut, **WRITE_ERRORS})
async def create_session(request: HttpRequest, payload: SessionIn):
    """Start an empty session; without a title, its first battle's prompt names it."""
    thread = await avisitor_write(
        request, lambda key: services.thread_create(session_key=key, title=payload.title),
        BATTLE_WRITE)
    return Status(201, _session_out(thread, 0))


@router.get("/sessions", response=SessionListOut)
async def list_sessions(request: HttpRequest, page: Query[PageIn]):
    """The caller's sessions, latest activity first, a page at a time."""
    def act(key):
        threads, count = selectors.thread_list_for_session(
            session_key=key, limit=page.limit, offset=page.offset)
        return {"sessions": [_session_out(t, t.battle_count) for t in threads],
                "count": count, "limit": page.limit, "offset": page.offset}

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

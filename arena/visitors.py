"""The visitor behind a request: what it is counted against, its session, what it may see.

Every mode's API and page forms go through these rather than calling the rate limiter and
the session store themselves (an async view awaits ``avisitor_write`` and ``avisitor_read``)::

    battle = visitor_write(request, lambda key: services.battle_create(session_key=key, ...),
                           BATTLE_CREATE)
    battle = found_or_404(selectors.battle_owned(battle_id=..., session_key=key), NOT_FOUND)

A write is counted against each of its limits first (429 past one), then runs with the
visitor's session key, which is created on its first write; a read gets the key only if
the visitor has one. Ownership selectors (``<entity>_owned``) answer ``None`` for what is
not the visitor's, and :func:`found_or_404` turns that into the API's 404.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from django.conf import settings
from django.http import HttpRequest

from arena.aio import database_call
from arena.errors import RuleError
from arena.ratelimit import visitor_limit
from arena.sessions import session_key_for
from arena.steps import release_database

T = TypeVar("T")


@dataclass(frozen=True)
class Limit:
    """``setting`` actions of one kind per ``per``, per visitor (IP and session; a signed-in
    person by account, with ``person_setting``'s figure when it has one)."""

    action: str
    setting: str
    per: Literal["minute", "hour"] = "minute"
    person_setting: str | None = None

    def count(self, request: HttpRequest, *, write: bool) -> None:
        person_limit = (getattr(settings, self.person_setting) if self.person_setting
                        else None)
        visitor_limit(request, action=self.action, limit=getattr(settings, self.setting),
                      per=self.per, fail_closed=write, person_limit=person_limit)


BATTLE_CREATE = Limit("battle_create", "ARENA_BATTLES_PER_MINUTE")
BATTLE_WRITE = Limit("battle_write", "ARENA_WRITES_PER_MINUTE")
VOICE_WRITE = Limit("voice_write", "ARENA_WRITES_PER_MINUTE")
PANEL_CREATE = Limit("panel_create", "ARENA_PANELS_PER_MINUTE")
PANEL_CLARIFY = Limit("panel_clarify", "ARENA_WRITES_PER_MINUTE")
DEBATE_API = Limit("debate_api", "ARENA_DEBATE_REQUESTS_PER_HOUR", "hour")
DEBATE_CREATE = Limit("debate_create", "ARENA_DEBATES_PER_HOUR", "hour",
                      person_setting="ARENA_PERSON_DEBATES_PER_HOUR")
DEBATE_WRITE = Limit("debate_write", "ARENA_WRITES_PER_MINUTE")
VOICE_BATTLE = Limit("voice_battle", "ARENA_VOICE_BATTLES_PER_HOUR", "hour")


def visitor_count(request: HttpRequest, *limits: Limit, write: bool = True) -> None:
    """Count one request against each limit; raise :class:`RateLimited` past one. A write
    that cannot be counted (Redis does not answer) is refused (a 503): limits that let
    everything through during an outage are no limits. A read goes on uncounted."""
    for limit in limits:
        limit.count(request, write=write)


def visitor_write(request: HttpRequest, action: Callable[[str], T], *limits: Limit) -> T:
    """Count the write, then run ``action`` with the visitor's session key (created now, on
    its first write)."""
    visitor_count(request, *limits)
    return action(session_key_for(request))


def visitor_read(request: HttpRequest, action: Callable[[str | None], T], *limits: Limit) -> T:
    """Count the read (when it has limits), then run ``action`` with the visitor's session
    key, or ``None`` for a visitor that has none (none is created)."""
    visitor_count(request, *limits, write=False)
    return action(session_key_for(request, create=False))


@database_call
def avisitor_write(request: HttpRequest, action: Callable[[str], T], *limits: Limit) -> T:
    """:func:`visitor_write` for an async view that then waits for the models: the write
    runs in a database thread, which gives its connection back before the wait."""
    try:
        return visitor_write(request, action, *limits)
    finally:
        release_database()


avisitor_read = database_call(visitor_read)


def found_or_404(found: T | None, message: str) -> T:
    """What a selector found, or the API's 404 with ``message``: what is not the visitor's
    is not found, never forbidden (a 403 would say that it exists)."""
    if found is None:
        raise RuleError(message, status=404)
    return found

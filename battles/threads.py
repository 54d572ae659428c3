"""Writes of a session (thread) as a whole: seed 001's ``POST /api/sessions``, which opens a
session and, given a prompt, its first battle in one call (lmarena-clone's shape)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from battles.models import Battle, Thread, Turn
from battles.services import battle_create, thread_create


@dataclass(frozen=True)
class Started:
    """A new session; its first battle and that battle's first turn when it was given a
    prompt, else None."""

    thread: Thread
    battle: Battle | None = None
    turn: Turn | None = None


def thread_start(*, session_key: str, title: str = "", prompt: str | None = None) -> Started:
    """A new session of the visitor; with ``prompt`` (even a blank one, which is refused),
    its first battle too, or nothing at all when either is refused. Without a title the
    session takes the prompt's."""
    if prompt is None:
        return Started(thread_create(session_key=session_key, title=title))
    with transaction.atomic():
        thread = thread_create(session_key=session_key, title=title)
        battle, turn = battle_create(session_key=session_key, prompt=prompt, thread=thread)
    thread.refresh_from_db()
    return Started(thread, battle, turn)

"""A visitor's session, made as the site makes one on a visitor's first write."""

from __future__ import annotations


def visitor_session_key() -> str:
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store["visitor"] = True
    store.create()
    return store.session_key

"""A visitor's ``user_id``: the opaque id seed 001's paths (``/api/sessions/user/{user_id}``)
name a visitor by.

lmarena-clone's clients make up a UUID and send it; here sessions are issued by the server
and never accepted from the client, so the server names the visitor instead: a keyed hash
(HMAC-SHA256 with ``SECRET_KEY``) of the visitor's session key. Nobody without the key and
the visitor's session cookie can compute it, it says nothing of the session key, and it is
checked only against the caller's own: another visitor's ``user_id`` finds nothing. It
changes when the session's key does (signing in gives a new one): ``GET /api/sessions``
always says the current one.
"""

from __future__ import annotations

import hmac

from django.utils.crypto import salted_hmac

SALT = "battles.users.user_id"
LENGTH = 32  # hex digits: 128 bits of the HMAC


def user_id_of(*, session_key: str | None) -> str | None:
    """The visitor's ``user_id``, or None for a visitor without a session."""
    if not session_key:
        return None
    return salted_hmac(SALT, session_key, algorithm="sha256").hexdigest()[:LENGTH]


def user_id_is(*, user_id: str, session_key: str | None) -> bool:
    """Whether ``user_id`` names the visitor of ``session_key`` (compared in constant time)."""
    own = user_id_of(session_key=session_key)
    return own is not None and hmac.compare_digest(
        own.encode(), user_id.encode("utf-8", "surrogatepass"))

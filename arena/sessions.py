"""The visitor is an anonymous Django session; a client that keeps cookies is one.

Sessions are issued, never accepted: a key the client sends is vetted against the session
table the first time anything reads it (:attr:`SessionStore.session_key`), and a key the
server never issued (or one that expired) is no session at all. Django's own store takes the
cookie's value as the key until the session is loaded, so a value planted in a visitor's
browser used to become their session as it was, readable by whoever planted it.

A session row is created only when a visitor writes something (:func:`session_key_for` with
``create=True``), once (one INSERT, no second save at the end of the request), and its cookie
is sent whatever the response's status: Django's own middleware skips it on a 5xx, which
would lose a new visitor's battle when its first answer fails (502) or is still being
written (504). When a person signs in, :func:`session_rotate` gives the session a new key
and moves every row the old key owned (each mode names them in ``Mode.session_fields``).

A signed-in person's rows are kept under their account's key (``accounts``), which their
session names (:data:`ACCOUNT_KEY`) and an API token stands for (``request.arena_account_key``):
:func:`session_key_for` and :func:`owner_key` answer it in place of the session's own key, so
what they do follows them from one browser or script to another.

This module is also the session engine (``SESSION_ENGINE = "arena.sessions"``).
"""

import time

from django.conf import settings
from django.contrib.sessions.backends import base, db
from django.contrib.sessions.middleware import SessionMiddleware
from django.db import transaction
from django.http import HttpRequest
from django.utils.cache import patch_vary_headers
from django.utils.crypto import get_random_string
from django.utils.http import http_date

from arena.middleware import OnTheLoop
from arena.visitor_merge import visitor_merge

ACCOUNT_KEY = "arena_account_key"  # the session's data: the signed-in person's key


class SessionStore(db.SessionStore):
    """Django's database sessions, with a client's key vetted before it is used, and without
    the query that checks a new random key is free (the INSERT does: a clash, one in 36^32,
    raises and ``create`` draws another key)."""

    def __init__(self, session_key: str | None = None) -> None:
        super().__init__(session_key)
        # A key from the client: until the session is loaded it is only what was sent.
        self._unvetted = self._session_key is not None

    @property
    def vetted(self) -> bool:
        """Whether :attr:`session_key` is known without a query."""
        return not self._unvetted

    @property
    def session_key(self) -> str | None:
        """The key, once the session table has it; None for a key it never issued."""
        if self._unvetted:
            self._unvetted = False  # first: loading reads the key again
            if not hasattr(self, "_session_cache"):
                self._session_cache = self.load()  # an unknown key becomes None
        return self._session_key

    def _get_session(self, no_load: bool = False) -> dict:
        self.session_key  # noqa: B018 - vets the key (one load, kept as the cache)
        return super()._get_session(no_load)

    async def _aget_session(self, no_load: bool = False) -> dict:
        if self._unvetted:
            self._unvetted = False
            if not hasattr(self, "_session_cache"):
                self._session_cache = await self.aload()
        return await super()._aget_session(no_load)

    def _get_new_session_key(self) -> str:
        return get_random_string(32, base.VALID_KEY_CHARS)

    def cycle_key(self) -> None:
        """A new key, the data kept (Django's), and every row the old key owned moved to
        it (each mode's ``session_fields``): Django's ``login`` calls this too."""
        with transaction.atomic():
            old = self.session_key
            super().cycle_key()
            if old:
                visitor_merge(old, self.session_key)


def session_rotate(request: HttpRequest) -> str:
    """Give the visitor's session a new key, its data and rows kept; the new key.

    What a sign-in calls (as Django's ``login`` does), so a key anyone else may have known
    before stops working at that moment, and the person keeps their battles, votes and
    points."""
    request.session.cycle_key()
    return request.session.session_key


def owner_key(session) -> str | None:
    """The key a session's visitor owns rows under: their account's when signed in, else the
    session's own (None for no session). Reading it vets the session's key: a query."""
    if session is None or not session.session_key:
        return None
    return session.get(ACCOUNT_KEY) or session.session_key


def session_key_for(request: HttpRequest, *, create: bool = True) -> str | None:
    """The key the request's visitor owns rows under: a token's account, a signed-in
    session's account, or the anonymous session's own key (created now, on a first write,
    when ``create``)."""
    token_key = getattr(request, "arena_account_key", None)
    if token_key:
        return token_key
    session = request.session
    if not session.session_key and create:
        session["visitor"] = True
        session.save()
        session.modified = False  # saved: the middleware only sends the cookie
    return owner_key(session)


class SessionCookieOnEveryStatus(OnTheLoop, SessionMiddleware):
    def needs_database(self, request, response) -> bool:
        session = getattr(request, "session", None)
        return session is not None and (session.modified or settings.SESSION_SAVE_EVERY_REQUEST)

    def process_response(self, request, response):
        response = super().process_response(request, response)
        session = getattr(request, "session", None)
        cookie = settings.SESSION_COOKIE_NAME
        # A session nothing read is left as it is: vetting its key would be a query, here
        # on the event loop, for a request that never needed it.
        if session is None or not session.vetted:
            return response
        if (session.session_key
                and not session.is_empty() and cookie not in response.cookies
                and request.COOKIES.get(cookie) != session.session_key):
            # The session was saved when it was created (session_key_for); only the
            # cookie is missing.
            patch_vary_headers(response, ("Cookie",))
            max_age = session.get_expiry_age()
            response.set_cookie(
                cookie, session.session_key, max_age=max_age,
                expires=http_date(time.time() + max_age),
                domain=settings.SESSION_COOKIE_DOMAIN, path=settings.SESSION_COOKIE_PATH,
                secure=settings.SESSION_COOKIE_SECURE or None,
                httponly=settings.SESSION_COOKIE_HTTPONLY or None,
                samesite=settings.SESSION_COOKIE_SAMESITE,
            )
        return response

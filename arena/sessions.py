"""The visitor is an anonymous Django session; a client that keeps cookies is one.

A session row is created only when a visitor writes something (:func:`session_key_for` with
``create=True``), once (one INSERT, no second save at the end of the request), and its cookie
is sent whatever the response's status: Django's own middleware skips it on a 5xx, which
would lose a new visitor's battle when its first answer fails (502) or is still being
written (504).

This module is also the session engine (``SESSION_ENGINE = "arena.sessions"``).
"""

import time

from django.conf import settings
from django.contrib.sessions.backends import base, db
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest
from django.utils.cache import patch_vary_headers
from django.utils.crypto import get_random_string
from django.utils.http import http_date

from arena.middleware import OnTheLoop


class SessionStore(db.SessionStore):
    """Django's database sessions without the query that checks a new random key is free:
    the INSERT does (a clash, one in 36^32, raises and ``create`` draws another key)."""

    def _get_new_session_key(self) -> str:
        return get_random_string(32, base.VALID_KEY_CHARS)


def session_key_for(request: HttpRequest, *, create: bool = True) -> str | None:
    session = request.session
    if not session.session_key and create:
        session["visitor"] = True
        session.save()
        session.modified = False  # saved: the middleware only sends the cookie
    return session.session_key


class SessionCookieOnEveryStatus(OnTheLoop, SessionMiddleware):
    def needs_database(self, request, response) -> bool:
        session = getattr(request, "session", None)
        return session is not None and (session.modified or settings.SESSION_SAVE_EVERY_REQUEST)

    def process_response(self, request, response):
        response = super().process_response(request, response)
        session = getattr(request, "session", None)
        cookie = settings.SESSION_COOKIE_NAME
        if (session is not None and session.session_key
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

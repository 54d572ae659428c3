"""The visitor is an anonymous Django session; a client that keeps cookies is one.

A session row is created only when a visitor writes something (:func:`session_key_for` with
``create=True``), and its cookie is sent whatever the response's status: Django's own
middleware skips it on a 5xx, which would lose a new visitor's battle when its first answer
fails (502) or is still being written (504).
"""

import time

from django.conf import settings
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest
from django.utils.cache import patch_vary_headers
from django.utils.http import http_date


def session_key_for(request: HttpRequest, *, create: bool = True) -> str | None:
    session = request.session
    if not session.session_key and create:
        session["visitor"] = True
        session.save()
    return session.session_key


class SessionCookieOnEveryStatus(SessionMiddleware):
    def process_response(self, request, response):
        response = super().process_response(request, response)
        session = getattr(request, "session", None)
        cookie = settings.SESSION_COOKIE_NAME
        if (response.status_code >= 500 and session is not None and session.session_key
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

"""``Authorization: Bearer <token>``: a script acts as the person whose API token it holds.

On every JSON API (each NinjaAPI of the site: /api/... and a seed's own paths), a request
with a Bearer header is the token's person before its view runs: ``request.user`` is their
user, and ``request.arena_account_key`` their account's key, which
:func:`arena.sessions.session_key_for` answers, so what the script creates and reads is the
person's, as from their signed-in browser, with their limits. An unknown or revoked token is
a 401 with ``WWW-Authenticate: Bearer realm="arena", error="invalid_token"``: no view runs.

A token request needs no proof that it comes from the site's pages
(:mod:`arena.api_writes`): that proof guards cookies, which a browser adds on its own to a
request another site makes it send, whereas a Bearer header is sent only by whoever holds the
token. So a request whose token was valid, and only such a request, is let past the check
(Django's ``_dont_enforce_csrf_checks``, which the write guard honours as Django's own CSRF
check does); its writes must still be JSON.

Other paths (pages, health checks, /metrics, which reads its own Bearer token) are left as
they are. Every 401 of a JSON API says ``WWW-Authenticate: Bearer realm="arena"``.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.utils.deprecation import MiddlewareMixin

from accounts.services import profile_of
from accounts.tokens import token_resolve
from arena.middleware import OnTheLoop
from arena.request_limits import is_json_api

REALM = 'Bearer realm="arena"'
INVALID_TOKEN = ("This API token is unknown or was revoked: create a new one on your profile "
                 "(/me/) or at POST /api/tokens, and send it as 'Authorization: Bearer "
                 "<token>'.")


def bearer_token(request: HttpRequest) -> str | None:
    """The token of an ``Authorization: Bearer ...`` header ("" when it names none), or None
    for a request without one."""
    scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip()


class ApiTokenAuthentication(OnTheLoop, MiddlewareMixin):
    """After Django's AuthenticationMiddleware: a valid token replaces the session's user."""

    def view_needs_database(self, request, callback) -> bool:
        return bearer_token(request) is not None and is_json_api(request)

    def process_view(self, request, callback, args, kwargs):
        token = bearer_token(request)
        if token is None or not is_json_api(request):
            return None
        found = token_resolve(token)
        if found is None:
            response = JsonResponse({"detail": INVALID_TOKEN}, status=401)
            response["WWW-Authenticate"] = f'{REALM}, error="invalid_token"'
            return response
        user = found.user

        async def auser():
            return user

        request.user, request.auser = user, auser
        request.arena_account_key = profile_of(user).visitor_key
        request.arena_api_token = found
        request._dont_enforce_csrf_checks = True  # no cookie in play: see the module's docstring
        return None

    def process_response(self, request, response):
        if (response.status_code == 401 and is_json_api(request)
                and not response.has_header("WWW-Authenticate")):
            response["WWW-Authenticate"] = REALM
        return response

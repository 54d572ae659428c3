"""Seed 004's hourly allowance: 100 requests an hour per anonymous address, 500 per person.

On top of the per-minute limits each write counts (:mod:`arena.visitors`), every request to a
JSON API (each :class:`ninja.NinjaAPI` of the site: /api/... and a seed's own paths such as
/battles/...) and every page form write is counted by the hour
(:func:`arena.ratelimit.requests_limit`): a signed-in person's — from any browser, script
(an API token) or address — by their account, anyone else's by client address. Past it, a
429 with ``Retry-After``: ``{"detail": ...}`` for the API, the page's error for a form.

Not counted: page reads, static files, health checks and metrics (no API's views), the
admin (staff), sign-in and sign-up (allauth limits those itself, django-axes the wrong
passwords), the browser's CSP reports, and the voice page's progress poll (once a second
while a call is evaluated: a few calls would spend an anonymous hour on it).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin

from arena.errors import RuleError, rule_error_response, wants_json
from arena.middleware import SAFE_METHODS, OnTheLoop
from arena.ratelimit import requests_limit

NOT_COUNTED_PREFIXES = ("/admin/", "/accounts/")
NOT_COUNTED_ROUTES = frozenset({"csp-report", "agent-metrics"})
REFUSED_PAGE = "arena/refused.html"


def is_json_api(request: HttpRequest) -> bool:
    """Whether the request was routed to one of the site's JSON APIs (a NinjaAPI's view)."""
    match = getattr(request, "resolver_match", None)
    return match is not None and "ninja" in match.app_names


def is_counted(request: HttpRequest) -> bool:
    """A JSON API request, or a page form write (see the module's docstring)."""
    match = getattr(request, "resolver_match", None)
    if match is None or match.url_name in NOT_COUNTED_ROUTES:
        return False
    if is_json_api(request):
        return True
    return (request.method not in SAFE_METHODS
            and not request.path.startswith(NOT_COUNTED_PREFIXES))


def refusal(request: HttpRequest, exc: RuleError) -> HttpResponse:
    """A refusal before any view ran: JSON for an API call, else the page's error (the
    fragment for htmx, which shows it where the person acted)."""
    if is_json_api(request) or wants_json(request):
        response = JsonResponse({"detail": exc.message}, status=exc.status)
        if exc.retry_after is not None:
            response["Retry-After"] = str(max(1, int(exc.retry_after)))
        return response
    return rule_error_response(request, exc, template=REFUSED_PAGE, context={})


class RequestsPerHour(OnTheLoop, MiddlewareMixin):
    """Counts each counted request before its view runs (after an API token named the
    person, :class:`accounts.middleware.ApiTokenAuthentication`); in a thread, since counting
    talks to Redis and may load the session."""

    def view_needs_database(self, request, callback) -> bool:
        return is_counted(request)

    def process_view(self, request, callback, args, kwargs):
        if not is_counted(request):
            return None
        try:
            requests_limit(request, write=request.method not in SAFE_METHODS)
        except RuleError as exc:  # 429 past the allowance; 503 when a write cannot be counted
            return refusal(request, exc)
        return None

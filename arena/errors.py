"""One error type for the rules of every mode, and the two places that turn it into a reply.

A service raises :class:`RuleError` with a message a person can act on and the fitting HTTP
status; the JSON API answers ``{"detail": message}`` (one exception handler, installed on the
API in :mod:`arena.api`), a page answers with its ``#error`` partial
(:func:`rule_error_response`). A 429 carries ``Retry-After``.

Example::

    raise RuleError(PROMPT_EMPTY)                        # 400
    raise RuleError(BATTLE_ALREADY_VOTED, status=409)
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


class RuleError(Exception):
    """A rule was broken: ``message`` is safe to show, ``status`` is the HTTP status."""

    def __init__(self, message: str, *, status: int = 400, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after


class RateLimited(RuleError):
    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message, status=429, retry_after=retry_after)


def wants_json(request: HttpRequest) -> bool:
    """An API call (under /api/, or one that sent or asked for JSON) is answered in JSON."""
    return (request.path.startswith("/api/")
            or request.META.get("CONTENT_TYPE", "").startswith("application/json")
            or request.META.get("HTTP_ACCEPT", "").startswith("application/json"))


def _with_retry_after(response: HttpResponse, exc: RuleError) -> HttpResponse:
    if exc.retry_after is not None:
        response["Retry-After"] = str(max(1, int(exc.retry_after)))
    return response


def api_rule_error(api, request: HttpRequest, exc: RuleError) -> HttpResponse:
    """The JSON API's answer to a broken rule: ``{"detail": ...}`` with its status."""
    response = api.create_response(request, {"detail": exc.message}, status=exc.status)
    return _with_retry_after(response, exc)


def rule_error_response(request: HttpRequest, exc: RuleError, *, template: str,
                        context: dict | None = None) -> HttpResponse:
    """A page's answer: the template's ``#error`` partial for htmx, else the whole page with
    the error shown where the person acted (``context`` fills the rest of the page)."""
    if getattr(request, "htmx", False) or context is None:
        response = render(request, f"{template}#error", {"error": exc.message},
                          status=exc.status)
    else:
        response = render(request, template, {**context, "error": exc.message},
                          status=exc.status)
    return _with_retry_after(response, exc)

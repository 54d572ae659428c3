"""Writes to a JSON API come from the arena's own pages (or an allowed origin), as JSON.

A page on another origin can make a visitor's browser send a write with the visitor's
cookies; with a ``text/plain`` body it is a "simple" request, sent without asking the server
first. Django's CSRF check guards the page forms; django-ninja's views are exempt from it, so
every write operation of every :class:`ninja.NinjaAPI` the arena builds is wrapped here
(:func:`guard_write`, installed by :func:`arena.api.answer_errors_as_detail`):

* the request must show it comes from the site: an ``Origin`` of the site itself or of an
  allowed origin (``CSRF_TRUSTED_ORIGINS``, ``CORS_ORIGINS``), else a ``Referer`` of one, else
  Django's CSRF token (the ``csrftoken`` cookie and the ``X-CSRFToken`` header): 403;
* a body must be JSON (``Content-Type: application/json``): 415.

Both are documented on every write operation of the OpenAPI schema. Django's test client
turns the CSRF part off as it does for Django's own check (``enforce_csrf_checks=False``), and
so does a valid API token (:mod:`accounts.middleware`): a Bearer header is no cookie a browser
adds on its own, so only the token's holder can send it, from anywhere.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cached_property, wraps
from urllib.parse import urlsplit

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponseForbidden, RawPostDataException
from django.middleware.csrf import CsrfViewMiddleware, RejectRequest

from arena.api_errors import ErrorOut
from arena.errors import RuleError

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
CROSS_SITE_WRITE = (
    "A write must come from this site's pages: send an Origin (or Referer) header of this "
    "site or of an origin it allows, or the CSRF token (the csrftoken cookie's value as the "
    "X-CSRFToken header).")
NOT_JSON = "Send the body as JSON, with the header Content-Type: application/json."
# What a write may answer before its operation runs (413: a body past the size limit).
WRITE_REFUSALS = (403, 413, 415)


class _SiteCheck(CsrfViewMiddleware):
    """Django's CSRF middleware, asked only what the API needs to know."""

    def __init__(self) -> None:
        super().__init__(lambda request: HttpResponseForbidden())

    @cached_property
    def allowed_origins_exact(self) -> set[str]:
        # The origins allowed to call the API with cookies are allowed to write through it.
        return super().allowed_origins_exact | set(settings.CORS_ALLOWED_ORIGINS)

    def from_site(self, request: HttpRequest) -> bool:
        if getattr(request, "_dont_enforce_csrf_checks", False):
            return True  # Django's test client, as for Django's own check
        origin = request.META.get("HTTP_ORIGIN")
        if origin is None and (referer := request.META.get("HTTP_REFERER")):
            parts = urlsplit(referer)
            origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
        if origin is not None:
            claimed = copy.copy(request)
            claimed.META = {**request.META, "HTTP_ORIGIN": origin}
            if self._origin_verified(claimed):
                return True
            if "HTTP_ORIGIN" in request.META:
                return False  # a browser named another origin: no token makes it ours
        try:
            self._check_token(request)
        except RejectRequest:
            return False
        return True


def refuse_foreign_write(request: HttpRequest) -> None:
    """Raise the 403 or 415 of a write that does not come from the site as JSON."""
    if not _SiteCheck().from_site(request):
        raise RuleError(CROSS_SITE_WRITE, status=403)
    if request.content_type != "application/json" and _has_body(request):
        raise RuleError(NOT_JSON, status=415)


def _has_body(request: HttpRequest) -> bool:
    try:
        return bool(request.body)
    except RawPostDataException:  # read as a form already: it had one
        return True


def document(operation, *statuses: int) -> None:  # noqa: ANN001 - a ninja Operation
    """Add ``{"detail": ...}`` answers to an operation's documented statuses."""
    for status in statuses:
        operation.response_models.setdefault(status, operation._create_response_model(ErrorOut))


def guard_write(api, operation, run: Callable) -> Callable:  # noqa: ANN001 - ninja's
    """``run`` (the operation's own), refusing a foreign write before anything of it runs;
    a read's ``run`` as it is. The write's refusals are documented on the operation."""
    if set(operation.methods) <= SAFE_METHODS:
        return run
    document(operation, *WRITE_REFUSALS)

    def refusal(request: HttpRequest):
        try:
            refuse_foreign_write(request)
        except Exception as exc:  # a RuleError, or a body too large to read (413)
            return api.on_exception(request, exc)
        return None

    if iscoroutinefunction(run):
        @wraps(run)
        async def guarded(request: HttpRequest, **kwargs):
            refused = refusal(request)
            return refused if refused is not None else await run(request, **kwargs)
    else:
        @wraps(run)
        def guarded(request: HttpRequest, **kwargs):
            refused = refusal(request)
            return refused if refused is not None else run(request, **kwargs)
    return guarded

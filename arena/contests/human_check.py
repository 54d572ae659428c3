"""The human check before a vote (Cloudflare Turnstile), asked only of some voters.

Off unless both ``ARENA_TURNSTILE_SITE_KEY`` and ``ARENA_TURNSTILE_SECRET_KEY`` are set.
When on, a vote path calls :func:`human_check_require` with the voter's key before it
records anything; it asks the check of a voter whom a standing vote-integrity flag marks
(:mod:`arena.contests.flags`, by session or address) or who cast more than
``ARENA_HUMAN_CHECK_AFTER_VOTES`` votes over the last day in all modes together (0: never for
that reason). A voter asked and without a token gets a 428 saying so, the page shows the
widget; the widget's token comes with the vote (form field ``cf-turnstile-response`` or
header ``X-Turnstile-Token``) or first to ``POST /api/human-check``. The token is verified
server-side against ``siteverify`` (``ARENA_TURNSTILE_VERIFY_URL``: form fields ``secret``,
``response``, ``remoteip``; JSON ``success`` and ``error-codes``), and a pass is remembered in
the session for ``ARENA_HUMAN_CHECK_VALID_SECONDS``.

A refused token is a 403 naming Cloudflare's error codes; a ``siteverify`` that does not
answer, answers badly or refuses our own secret is a 503 asking to retry. Either way the vote
was not recorded (nothing is half-written: the check runs before the vote's service), and
the page keeps the choice for the retry.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

import httpx
from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone

from arena import modes
from arena.contests.flags import voter_of
from arena.errors import RuleError
from arena.models import FlagStatus, VisitorFlag
from arena.ratelimit import client_ip

logger = logging.getLogger(__name__)

HUMAN_CHECK_NEEDED = ("Confirm you are a person first: complete the check shown on the page, "
                      "then vote again. Your vote was not recorded.")
HUMAN_CHECK_FAILED = ("The human check did not pass ({codes}): complete it again, then vote "
                      "again. Your vote was not recorded.")
HUMAN_CHECK_UNAVAILABLE = ("The human check could not be verified just now: try again in a "
                           "minute. Your vote was not recorded.")
RETRY_AFTER_SECONDS = 30
PASSED_UNTIL = "arena_human_until"  # the session's data: a POSIX time
TOKEN_FIELD = "cf-turnstile-response"  # what the widget adds to its form
TOKEN_HEADER = "X-Turnstile-Token"
# Cloudflare's codes that say our side is wrong, not the visitor's token.
OUR_FAULT = {"missing-input-secret", "invalid-input-secret", "internal-error", "bad-request"}


def human_check_enabled() -> bool:
    return bool(settings.ARENA_TURNSTILE_SITE_KEY and settings.ARENA_TURNSTILE_SECRET_KEY)


def human_check_passed(request: HttpRequest) -> bool:
    until = request.session.get(PASSED_UNTIL) if hasattr(request, "session") else None
    return isinstance(until, int | float) and until > time.time()


def votes_today(session_key: str) -> int:
    """The key's votes over the last day, in every mode."""
    since = timezone.now() - timedelta(days=1)
    return sum(counted.model.objects.filter(**{counted.session: session_key},
                                            created_at__gte=since).count()
               for counted in modes.counted_votes())


def human_check_needed(request: HttpRequest, *, session_key: str | None) -> bool:
    """Whether this voter must pass the check before voting (see the module)."""
    if not human_check_enabled() or human_check_passed(request):
        return False
    visitors = [v for v in (f"session:{session_key}" if session_key else "",
                            voter_of(request)) if v]
    if VisitorFlag.objects.filter(visitor__in=visitors, status__in=[
            FlagStatus.FLAGGED, FlagStatus.CONFIRMED]).exists():
        return True
    after = settings.ARENA_HUMAN_CHECK_AFTER_VOTES
    return bool(after and session_key and votes_today(session_key) >= after)


def human_check_verify(request: HttpRequest, token: str) -> None:
    """Ask ``siteverify`` about ``token``; remember a pass in the session, else raise."""
    fields = {"secret": settings.ARENA_TURNSTILE_SECRET_KEY, "response": token[:2048]}
    if ip := client_ip(request):
        fields["remoteip"] = ip
    try:
        answer = httpx.post(settings.ARENA_TURNSTILE_VERIFY_URL, data=fields,
                            timeout=settings.ARENA_TURNSTILE_TIMEOUT_SECONDS)
        answer.raise_for_status()
        verdict = answer.json()
        success, codes = verdict["success"] is True, list(verdict.get("error-codes") or [])
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
        logger.warning("human check: siteverify did not answer usably: %s", type(exc).__name__)
        raise RuleError(HUMAN_CHECK_UNAVAILABLE, status=503,
                        retry_after=RETRY_AFTER_SECONDS) from None
    if not success:
        if OUR_FAULT & set(codes):
            logger.error("human check: siteverify refused the arena's request: %s", codes)
            raise RuleError(HUMAN_CHECK_UNAVAILABLE, status=503, retry_after=RETRY_AFTER_SECONDS)
        raise RuleError(HUMAN_CHECK_FAILED.format(codes=", ".join(codes) or "no reason given"),
                        status=403)
    request.session[PASSED_UNTIL] = int(time.time()) + settings.ARENA_HUMAN_CHECK_VALID_SECONDS


def _token(request: HttpRequest) -> str:
    token = request.headers.get(TOKEN_HEADER, "")
    if not token and request.content_type in ("application/x-www-form-urlencoded",
                                              "multipart/form-data"):
        token = request.POST.get(TOKEN_FIELD, "")
    return token.strip()


def human_check_require(request: HttpRequest, *, session_key: str | None) -> None:
    """Before a vote is recorded: nothing when the voter need not pass the check (or passed
    it lately); else verify the token the request carries, or refuse with a 428."""
    if not human_check_needed(request, session_key=session_key):
        return
    token = _token(request)
    if not token:
        raise RuleError(HUMAN_CHECK_NEEDED, status=428)
    human_check_verify(request, token)

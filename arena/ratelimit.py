"""Rate limits on Redis through the `limits` library: per visitor and per provider.

An anonymous visitor is counted twice, by client IP and by session (when it has one), so a
script that drops its cookie gains nothing; a signed-in person (a session of their account, or
one of their API tokens) is counted by their account, whichever browser, script or address
they come from (:func:`account_key`). Every write endpoint and page form calls
:func:`visitor_limit` before it creates a session or writes anything, and every JSON API
request and page form write is counted by the hour as well (:func:`requests_limit`, seed
004's 100 an hour per anonymous address, 500 per person: :mod:`arena.request_limits`). Each
model provider has a global budget of calls per minute (:func:`provider_budget`), spent when
work is queued for it. All raise :class:`arena.errors.RateLimited` (429 with ``Retry-After``).

The client IP is ``REMOTE_ADDR`` unless ``ARENA_TRUSTED_PROXY_HEADER`` names the header a
trusted proxy sets (e.g. ``X-Forwarded-For``; the last address in it is the one the proxy saw).
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import math
import time
from collections.abc import Iterable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from limits import RateLimitItemPerHour, RateLimitItemPerMinute
from limits.storage import RedisStorage
from limits.strategies import FixedWindowRateLimiter

from arena.cache import redis_skipped, redis_timed_out
from arena.errors import RateLimited, RuleError
from arena.sessions import ACCOUNT_KEY

logger = logging.getLogger(__name__)

TOO_MANY = "Too many requests: at most {limit} per {per}. Try again in {seconds} s."
PERIODS = {"minute": RateLimitItemPerMinute, "hour": RateLimitItemPerHour}
PROVIDER_BUSY = (
    "The models are busy right now (more requests than their providers allow per minute). "
    "Try again in {seconds} s; nothing was started."
)

# A write is refused while its limits cannot be counted (limits that let everything through
# while Redis is away are no limits); a read goes on uncounted.
CANNOT_COUNT = ("The arena is temporarily unavailable (its queue and cache, Redis, do not "
                "answer), so it cannot count requests and takes no new work: nothing was "
                "changed. Try again in a few seconds.")
CANNOT_COUNT_RETRY_SECONDS = 10


class LimitsUnavailable(RuleError):
    def __init__(self) -> None:
        super().__init__(CANNOT_COUNT, status=503, retry_after=CANNOT_COUNT_RETRY_SECONDS)


_limiter: FixedWindowRateLimiter | None = None


def limiter() -> FixedWindowRateLimiter:
    global _limiter
    if _limiter is None:
        uri = settings.REDIS_URL.replace("unix://", "redis+unix://", 1)
        storage = RedisStorage(uri, key_prefix=f"{settings.CACHES['default']['KEY_PREFIX']}"
                                               ":limits", socket_timeout=1)
        _limiter = FixedWindowRateLimiter(storage)
    return _limiter


def limits_reset() -> None:
    """Forget every count (tests)."""
    limiter().storage.reset()


def client_ip(request: HttpRequest) -> str:
    header = settings.ARENA_TRUSTED_PROXY_HEADER
    if header:
        forwarded = request.headers.get(header, "")
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-1]
    return request.META.get("REMOTE_ADDR") or "unknown"


def client_address(request: HttpRequest) -> str | None:
    """:func:`client_ip` when it is an IP address, else None (a request made in code, such
    as a test's login, has none); what django-axes records."""
    ip = client_ip(request)
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        return None
    return ip


@functools.cache
def _networks(spec: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    try:
        return tuple(ipaddress.ip_network(part.strip(), strict=False)
                     for part in spec.split(",") if part.strip())
    except ValueError as exc:
        raise ImproperlyConfigured(f"ARENA_RATE_LIMIT_RAISED_FOR: {exc}") from None


def limit_multiplier(request: HttpRequest) -> int:
    """How many times the usual limits this client gets: ARENA_RATE_LIMIT_RAISED_MULTIPLIER
    for an address in ARENA_RATE_LIMIT_RAISED_FOR, else 1."""
    spec = settings.ARENA_RATE_LIMIT_RAISED_FOR
    ip = client_address(request) if spec else None
    if ip and any(ipaddress.ip_address(ip) in network for network in _networks(spec)):
        return settings.ARENA_RATE_LIMIT_RAISED_MULTIPLIER
    return 1


def _hit(item, *identifiers: str, fail_closed: bool) -> int | None:
    """Count one use; the seconds until the window resets when over the limit, else None.
    When the store does not answer: :class:`LimitsUnavailable` if ``fail_closed``, else
    None (the use goes uncounted). After a timeout a read does not ask again for a few
    seconds (:func:`arena.cache.redis_skipped`): a stalled Redis costs reads one wait."""
    try:
        if not fail_closed:  # a read that Redis timed out on a moment ago goes on at once; a
            redis_skipped()  # write asks, so that it goes through the moment Redis is back
        if limiter().hit(item, *identifiers):
            return None
        reset_at, _ = limiter().get_window_stats(item, *identifiers)
    except Exception as error:  # a Redis outage must not take the arena down with it
        redis_timed_out(error)
        logger.warning("rate limit store unavailable for %s", identifiers[0])
        if fail_closed:
            raise LimitsUnavailable() from None
        return None
    return max(1, math.ceil(reset_at - time.time()))


def account_key(request: HttpRequest) -> str | None:
    """The signed-in person's account key: an API token's (``request.arena_account_key``,
    :mod:`accounts.middleware`) or their session's; None for an anonymous visitor. Reading a
    session the client named loads it: a query, made once per request."""
    token_key = getattr(request, "arena_account_key", None)
    if token_key:
        return token_key
    session = getattr(request, "session", None)
    return session.get(ACCOUNT_KEY) if session is not None else None


def _refuse_past(waits: list[int | None], *, limit: int, per: str) -> None:
    wait = max((w for w in waits if w is not None), default=None)
    if wait is not None:
        raise RateLimited(TOO_MANY.format(limit=limit, per=per, seconds=wait), wait)


def visitor_limit(request: HttpRequest, *, action: str, limit: int,
                  per: str = "minute", fail_closed: bool = False,
                  person_limit: int | None = None) -> None:
    """Count one ``action`` of this visitor (a signed-in person by account, anyone else by
    IP and session); raise past ``limit`` per ``per`` ("minute" or "hour") — a person's is
    ``person_limit`` when given — and, with ``fail_closed`` (a write), when it cannot be
    counted."""
    person = account_key(request)
    if person and person_limit is not None:
        limit = person_limit
    if limit <= 0:
        return
    limit *= limit_multiplier(request)
    item = PERIODS[per]
    if person:
        waits = [_hit(item(limit), action, "person", person, fail_closed=fail_closed)]
    else:
        waits = [_hit(item(limit * settings.ARENA_RATE_LIMIT_IP_MULTIPLIER),
                      action, "ip", client_ip(request), fail_closed=fail_closed)]
        session_key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
        if session_key:
            waits.append(_hit(item(limit), action, "session", session_key,
                              fail_closed=fail_closed))
    _refuse_past(waits, limit=limit, per=per)


def requests_limit(request: HttpRequest, *, write: bool) -> None:
    """Count one request against the hour's allowance: a signed-in person's
    (``ARENA_PERSON_REQUESTS_PER_HOUR``, by account), else the client address's
    (``ARENA_ANON_REQUESTS_PER_HOUR``); raise past it, and, for a ``write``, when it cannot be
    counted (0: no allowance to count). Raised clients get theirs multiplied, as for every
    limit."""
    person = account_key(request)
    if person:
        limit, kind, who = settings.ARENA_PERSON_REQUESTS_PER_HOUR, "person", person
    else:
        limit, kind, who = settings.ARENA_ANON_REQUESTS_PER_HOUR, "ip", client_ip(request)
    if limit <= 0:
        return
    limit *= limit_multiplier(request)
    wait = _hit(RateLimitItemPerHour(limit), "requests", kind, who, fail_closed=write)
    _refuse_past([wait], limit=limit, per="hour")


def provider_budget(providers: Iterable[str]) -> None:
    """Spend one call of each provider's per-minute budget (one entry per call)."""
    limit = settings.ARENA_PROVIDER_CALLS_PER_MINUTE
    if limit <= 0:
        return
    item = RateLimitItemPerMinute(limit)
    for provider in providers:
        wait = _hit(item, "provider", provider, fail_closed=True)
        if wait is not None:
            raise RateLimited(PROVIDER_BUSY.format(seconds=wait), wait)

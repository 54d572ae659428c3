"""A fixed-window rate limit on Redis (the cache), per key and action."""

from __future__ import annotations

import logging
import time

from django.core.cache import cache

logger = logging.getLogger(__name__)


class RateLimited(Exception):
    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def rate_limit_hit(*, key: str, action: str, limit: int, window_seconds: int) -> None:
    """Count one use; raise RateLimited past ``limit`` uses in the current window."""
    if limit <= 0:
        return
    window = int(time.time() // window_seconds)
    cache_key = f"ratelimit:{action}:{key}:{window}"
    try:
        added = cache.add(cache_key, 1, window_seconds + 5)
        count = 1 if added else cache.incr(cache_key)
    except Exception:  # a cache outage must not take the arena down with it
        logger.warning("rate limit cache unavailable for %s", action)
        return
    if count > limit:
        retry_after = window_seconds - int(time.time() % window_seconds)
        raise RateLimited(
            f"Too many requests: at most {limit} per {window_seconds} s. "
            f"Try again in {retry_after} s.",
            retry_after,
        )

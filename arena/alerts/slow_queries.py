"""Slow database queries, counted where every process of every node sees them.

Every connection runs its queries through :func:`time_query` (added when the connection
opens, :func:`install`, connected to Django's ``connection_created`` by :mod:`arena.apps`):
the web processes, the workers' steps and beat alike. The wrapper costs two
``perf_counter()`` calls and a comparison per query; only a query slower than
``ARENA_ALERT_SLOW_QUERY_MS`` adds one to its minute's count in the cache (Redis, shared by
every process), and the slow-queries rule sums the counts of the window's minutes (so the
window is counted in whole minutes: up to a minute longer than set).

Counting never costs a query its answer: a cache that fails is logged and the query goes on.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

BUCKET_SECONDS = 60
KEY = "alerts:slow-queries:{minute}"


def time_query(execute, sql, params, many, context):
    """Django's ``execute_wrapper`` signature: run the query, count it if it was slow (a
    query that fails after taking long was slow too)."""
    started = time.perf_counter()
    try:
        return execute(sql, params, many, context)
    finally:
        if (time.perf_counter() - started) * 1000 > settings.ARENA_ALERT_SLOW_QUERY_MS:
            slow_query_count_add()


def install(sender, connection, **kwargs) -> None:
    """``connection_created``: time this connection's queries. The signal comes each time
    the connection object reconnects (a pooled PostgreSQL one, after every request), so the
    wrapper is added once."""
    if time_query not in connection.execute_wrappers:
        connection.execute_wrappers.append(time_query)


def _minute(moment: float) -> int:
    return int(moment // BUCKET_SECONDS)


def slow_query_count_add(*, now: float | None = None) -> None:
    key = KEY.format(minute=_minute(time.time() if now is None else now))
    try:
        # Kept as long as a window can look back, then dropped by Redis.
        cache.add(key, 0, settings.ARENA_ALERT_WINDOW_SECONDS + 2 * BUCKET_SECONDS)
        cache.incr(key)
    except Exception as exc:  # never fail the query for its count
        logger.warning("a slow query could not be counted (%s)", type(exc).__name__)


def _keys(now: datetime, window_seconds: float) -> list[str]:
    last = _minute(now.timestamp())
    first = _minute(now.timestamp() - window_seconds)
    return [KEY.format(minute=m) for m in range(first, last + 1)]


def slow_queries_count(*, now: datetime, window_seconds: float) -> int:
    """Queries slower than the threshold in the window, over every process."""
    return sum(int(v) for v in cache.get_many(_keys(now, window_seconds)).values())


def slow_queries_forget(*, now: datetime, window_seconds: float) -> None:
    """Forget the window's counts (the tests start from none)."""
    cache.delete_many(_keys(now, window_seconds))

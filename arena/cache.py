"""Django's Redis cache with one connection pool per process instead of one per request.

Django keeps a cache object per async context: under ASGI each request gets a new one, and
Django's client gives each object a pool of its own. Every request that touches the cache then
opens a new connection to Redis (a TCP handshake and the client's hello), and leaves it to the
garbage collector. Here the pools live at module level, keyed by server and options, so every
request of the process borrows a connection that is already open. The client in front of each
pool is kept too (Django built one per cache call; building it costs more than a ``SET``).
redis-py's pool and client are thread safe, and the pool starts afresh in a forked child.

A Redis that stops answering (paused, or a network that drops packets) costs one call its
socket timeout; for the next ``SKIP_SECONDS`` every call of the process fails at once instead
of waiting too (:func:`redis_skipped`, which the rate limits of :mod:`arena.ratelimit` heed
as well: the same server). The callers treat the cache as an optimisation, so a page that
reads many keys answers in about a second, not a second per key. A Redis that refuses
connections fails each call at once anyway, and is used again the moment it is back.
"""

from __future__ import annotations

import functools
import threading
import time

import redis
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_clients: dict[tuple[str, str], redis.Redis] = {}
_clients_lock = threading.Lock()
SKIP_SECONDS = 5.0
_skip_until = 0.0
UNREACHABLE = "Redis did not answer a moment ago; the cache is skipped for a few seconds"


def redis_skipped() -> None:
    """Raise a ConnectionError at once while Redis is known not to answer."""
    if time.monotonic() < _skip_until:
        raise redis.ConnectionError(UNREACHABLE)


def redis_timed_out(error: BaseException) -> None:
    """Skip Redis for :data:`SKIP_SECONDS` if ``error`` is a timeout; a refused connection
    fails at once: nothing to skip."""
    global _skip_until
    if isinstance(error, redis.TimeoutError):
        _skip_until = time.monotonic() + SKIP_SECONDS


def _skipping(method):
    """The cache call, or a fast ConnectionError while Redis is known not to answer."""
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        redis_skipped()
        try:
            return method(self, *args, **kwargs)
        except redis.RedisError as error:
            redis_timed_out(error)
            raise
    return call


class SharedPoolClient(RedisCacheClient):
    def get_client(self, key=None, *, write: bool = False) -> redis.Redis:  # noqa: ARG002
        server = self._servers[self._get_connection_pool_index(write)]
        shared = (server, repr(sorted(self._pool_options.items(), key=lambda item: item[0])))
        client = _clients.get(shared)
        if client is None:
            with _clients_lock:
                client = _clients.get(shared)
                if client is None:
                    pool = self._pool_class.from_url(server, **self._pool_options)
                    client = _clients[shared] = self._client(connection_pool=pool)
        return client

    def _get_connection_pool(self, write: bool) -> redis.ConnectionPool:
        return self.get_client(write=write).connection_pool


class SharedPoolRedisCache(RedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = SharedPoolClient

    add = _skipping(RedisCache.add)
    get = _skipping(RedisCache.get)
    set = _skipping(RedisCache.set)
    delete = _skipping(RedisCache.delete)
    get_many = _skipping(RedisCache.get_many)
    set_many = _skipping(RedisCache.set_many)
    incr = _skipping(RedisCache.incr)
    touch = _skipping(RedisCache.touch)

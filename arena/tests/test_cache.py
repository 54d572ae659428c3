"""The cache's Redis connections are the process's, not each request's (arena.cache)."""

import asyncio
import contextvars

from asgiref.sync import sync_to_async
from django.core.cache import caches


async def one_request(index: int):
    """What a request that touches the cache does, in a context of its own as Django's ASGI
    handler gives each request; the cache object it used."""
    cache = caches["default"]
    await sync_to_async(cache.set)(f"test-cache-shared-{index}", index, 30)
    assert await sync_to_async(cache.get)(f"test-cache-shared-{index}") == index
    return cache


async def test_requests_borrow_the_processs_connections_to_redis():
    pool = caches["default"]._cache._get_connection_pool(True)
    created_before = pool._created_connections
    used = [await asyncio.get_running_loop().create_task(
        one_request(index), context=contextvars.Context()) for index in range(5)]
    # Django gives each request its own cache object; they share one pool, and requests one
    # after another need at most one new connection between them (not one each).
    assert len({id(cache) for cache in used}) == 5
    assert {id(cache._cache._get_connection_pool(True)) for cache in used} == {id(pool)}
    assert len({id(cache._cache.get_client(write=True)) for cache in used}) == 1
    assert pool._created_connections - created_before <= 1

"""One event loop per process for the I/O of model work.

Celery runs each step in a worker thread; the step's network I/O (the provider's stream,
the channel layer, Redis) runs as a coroutine on this process's one background loop, and the
thread waits for it. Hundreds of streams then share one loop, one channel-layer connection
pool and one Redis pool, and a thread costs only its stack while it waits: the worker can hold
as many model calls as it has threads (``CELERY_CONCURRENCY``), not as many as it has cores.

Example::

    completion = aio.run(complete_chat(endpoint, messages))
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import AsyncToSync, ThreadSensitiveContext, sync_to_async
from channels.db import database_sync_to_async

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_pid: int | None = None


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop where it is installed (less CPU per stream), else asyncio's own loop."""
    try:
        import uvloop  # noqa: PLC0415 - optional (not on Windows): else asyncio's loop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def background_loop() -> asyncio.AbstractEventLoop:
    """This process's I/O loop, started on first use (and again in a forked child)."""
    global _loop, _pid
    with _lock:
        if _loop is None or _pid != os.getpid() or _loop.is_closed():
            loop = _new_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=serve, name="arena-io-loop", daemon=True).start()
            ready.wait()
            _loop, _pid = loop, os.getpid()
        return _loop


def on_background_loop() -> bool:
    """Whether the calling coroutine runs on this process's I/O loop."""
    try:
        return asyncio.get_running_loop() is _loop and _pid == os.getpid()
    except RuntimeError:
        return False


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the background loop and wait for its result (from a sync thread)."""
    loop = background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coro.close()
        raise RuntimeError("aio.run() called from the background loop itself; await instead")
    return asyncio.run_coroutine_threadsafe(coro, loop).result()



def database_call(function):
    """``function`` (sync, touching the database) as a coroutine function that runs it in a
    shared pool of long-lived threads rather than in a thread of the request's own.

    Django gives every request a new thread, hence a new database connection, and Celery a
    new producer per thread: at a hundred requests at once that costs more than the work.
    Connections are checked (and, on PostgreSQL, given back to the pool) before and after
    each call, as Channels does for its consumers. Called under ``async_to_sync`` from a sync
    thread (the test client, a command), it runs in that thread, whose connection may hold
    an open transaction, exactly as Django's own ``sync_to_async``.
    """
    shared = database_sync_to_async(function, thread_sensitive=False)
    outer = sync_to_async(function, thread_sensitive=True)

    @functools.wraps(function)
    async def call(*args, **kwargs):
        under_sync_thread = getattr(AsyncToSync.executors, "current", None) is not None
        return await (outer if under_sync_thread else shared)(*args, **kwargs)

    return call


REQUEST_THREADS_KEPT = 64


def reused_request_threads(app):
    """``app`` (Django's ASGI handler) with each request's own thread taken from a pool of
    long-lived ones rather than started for it.

    Django runs a request's thread-sensitive sync code (its signal receivers, sync views and
    middleware) in a thread of the request's own: asgiref starts one per request and another
    to join it at the end, about a third of a millisecond of CPU per request. Here a request
    gets an idle single-thread executor (one request at a time each, as before) and gives it
    back when it ends; at most :data:`REQUEST_THREADS_KEPT` idle ones are kept.
    """
    idle: list[ThreadPoolExecutor] = []

    @functools.wraps(app)
    async def handle(scope, receive, send):
        executor = idle.pop() if idle else ThreadPoolExecutor(1, "arena-request")
        try:
            async with ThreadSensitiveContext(executor=executor):
                await app(scope, receive, send)
        finally:
            if len(idle) < REQUEST_THREADS_KEPT:
                idle.append(executor)
            else:
                executor.shutdown(wait=False)

    return handle

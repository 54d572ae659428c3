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
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_pid: int | None = None


def background_loop() -> asyncio.AbstractEventLoop:
    """This process's I/O loop, started on first use (and again in a forked child)."""
    global _loop, _pid
    with _lock:
        if _loop is None or _pid != os.getpid() or _loop.is_closed():
            loop = asyncio.new_event_loop()
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

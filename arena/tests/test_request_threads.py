"""Each request's thread-sensitive code runs on a kept thread (arena.aio.reused_request_threads):
one request at a time per thread, as Django's own, without starting threads per request."""

import asyncio
import threading

from asgiref.sync import ThreadSensitiveContext, sync_to_async

from arena.aio import reused_request_threads


def recording_app(seen: dict, held: asyncio.Event, release: asyncio.Event):
    """An ASGI app recording the threads its two thread-sensitive calls ran on, by path, in a
    thread-sensitive context of its own as Django's handler opens; the path /hold waits
    between the two calls until ``release`` is set."""

    async def app(scope, receive, send):
        async with ThreadSensitiveContext():
            first = await sync_to_async(threading.get_ident)()
            if scope["path"] == "/hold":
                held.set()
                await release.wait()
            second = await sync_to_async(threading.get_ident)()
        seen.setdefault(scope["path"], []).append((first, second))

    return app


def request(path: str) -> dict:
    return {"type": "http", "path": path}


async def test_a_request_keeps_one_thread_and_the_next_reuses_it():
    seen, held, release = {}, asyncio.Event(), asyncio.Event()
    app = reused_request_threads(recording_app(seen, held, release))
    threads_before = threading.active_count()
    for _ in range(5):
        await app(request("/a"), None, None)
    assert all(first == second for first, second in seen["/a"])  # thread-sensitive
    assert len({first for first, _ in seen["/a"]}) == 1  # the next request reuses the thread
    assert seen["/a"][0][0] != threading.get_ident()  # never the event loop's own
    assert threading.active_count() <= threads_before + 1


async def test_requests_at_once_never_share_a_thread():
    seen, held, release = {}, asyncio.Event(), asyncio.Event()
    app = reused_request_threads(recording_app(seen, held, release))
    await app(request("/warm"), None, None)  # one idle kept thread
    holding = asyncio.ensure_future(app(request("/hold"), None, None))
    await held.wait()  # the first request has taken the idle thread and waits
    await app(request("/b"), None, None)
    release.set()
    await holding
    (hold_first, hold_second), = seen["/hold"]
    (other, _), = seen["/b"]
    assert hold_first == hold_second == seen["/warm"][0][0]
    assert other != hold_first

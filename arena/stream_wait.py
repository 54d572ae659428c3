"""The JSON API's wait for a stream's end: without a thread, on the end events of
:mod:`arena.streaming`'s groups, reading the database when they are due or Redis fails."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from channels.layers import get_channel_layer

from arena.streaming import FINISH_EVENTS, bounded, end_group, redis_error

T = TypeVar("T")


async def wait_until(group: str, check: Callable[[], Awaitable[tuple[T | None, int]]], *,
                     timeout: float, events: Iterable[str] = FINISH_EVENTS,
                     recheck: float = 2.0) -> T | None:
    """Wait, without holding a thread, until ``check()`` has a result or ``timeout`` passes.

    ``check()`` answers ``(result, running)``: the result once everything is finished, else
    None and how many of ``group``'s streams are still running. It is asked again once that
    many of their ends (``events``) arrived, or after ``recheck`` seconds in case one was
    missed; so a turn of two answers is read twice, not once per event. The result, or None
    when ``timeout`` passed first. With Redis failing it asks every ``recheck`` seconds.
    """
    wanted = frozenset(events)
    layer = get_channel_layer()
    channel = await layer.new_channel()
    group = end_group(group)
    try:
        await bounded(layer.group_add(group, channel))
        listening = True
    except redis_error():
        listening = False
    try:
        deadline = time.monotonic() + timeout
        while True:
            result, running = await check()
            if result is not None or time.monotonic() >= deadline:
                return result
            for _ in range(max(running, 1)):
                wait = min(deadline - time.monotonic(), recheck)
                if not listening:
                    await asyncio.sleep(max(wait, 0))
                    break
                try:
                    if wait <= 0 or not await _next_event(layer, channel, wait, wanted):
                        break  # nothing arrived in time: look again
                except redis_error():
                    listening = False
                    break
    finally:
        if listening:
            with contextlib.suppress(redis_error()):  # else the membership expires with the group
                await bounded(layer.group_discard(group, channel))


async def _next_event(layer, channel: str, timeout: float, wanted: frozenset[str]) -> bool:
    """Whether one of ``wanted`` arrived on ``channel`` within ``timeout``."""
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            event = await asyncio.wait_for(layer.receive(channel), timeout=remaining)
        except TimeoutError:
            return False
        if event.get("message", {}).get("event") in wanted:
            return True
    return False

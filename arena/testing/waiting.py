"""Waiting in tests for a state to be reached: a condition polled with a deadline (never a
fixed sleep standing in for synchronisation)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from asgiref.sync import sync_to_async

T = TypeVar("T")


def wait_for(condition: Callable[[], T], timeout: float = 30.0, *,
             what: str = "the condition") -> T:
    """The first truthy value of ``condition()``; fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        threading.Event().wait(0.05)


async def async_wait_for(condition: Callable[[], T], timeout: float = 30.0, *,
                         what: str = "the condition") -> T:
    """:func:`wait_for` from a coroutine: ``condition`` (which may use the database) runs
    in the sync thread one call at a time, and the loop runs between calls, so what the test
    waits for can happen meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await sync_to_async(condition)()
        if value:
            return value
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)

"""Waiting in tests for a state to be reached: a condition polled with a deadline (never a
fixed sleep standing in for synchronisation).

A deadline is a ceiling for a test that has already failed, never what decides a correct
one: every ceiling goes through :func:`ceiling`, which multiplies it by
``ARENA_TEST_WAIT_SCALE`` (default 4), so a busy machine (the suite's own parallel
processes, a CI host) waits longer instead of failing a correct test.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from asgiref.sync import sync_to_async

T = TypeVar("T")

WAIT_SCALE = float(os.environ.get("ARENA_TEST_WAIT_SCALE") or 4)


def ceiling(seconds: float) -> float:
    """The longest a test waits for something that takes ``seconds`` on a quiet machine."""
    return seconds * WAIT_SCALE


def wait_for(condition: Callable[[], T], timeout: float = 30.0, *,
             what: str = "the condition") -> T:
    """The first truthy value of ``condition()``; fails the test after ``ceiling(timeout)``
    seconds."""
    timeout = ceiling(timeout)
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
    timeout = ceiling(timeout)
    deadline = loop.time() + timeout
    while True:
        value = await sync_to_async(condition)()
        if value:
            return value
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)

"""Waiting in tests for a state to be reached: a condition polled with a deadline (never a
fixed sleep standing in for synchronisation)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

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

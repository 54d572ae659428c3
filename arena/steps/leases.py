"""Leases and heartbeats: how a running step shows it is alive.

A claim gives the step a lease of ``ARENA_STEP_LEASE_SECONDS``; while the job runs, one
background thread per process (the keeper) pushes the lease of every step this process holds
forward every ``ARENA_STEP_HEARTBEAT_SECONDS``, in one UPDATE per step table and generation,
and releases its database connection between beats.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from arena.steps.base import Step, StepStatus

logger = logging.getLogger(__name__)


def lease_until(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) + timedelta(seconds=settings.ARENA_STEP_LEASE_SECONDS)


def step_heartbeat(model: type[Step], pks, generation: int) -> int:
    """Extend the lease of running steps (of one generation); how many rows were extended."""
    return model.objects.filter(pk__in=list(pks), generation=generation,
                                status=StepStatus.RUNNING).update(lease_expires_at=lease_until())


class _Keeper:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held: dict[tuple[type[Step], int], dict[object, int]] = defaultdict(dict)
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None
        self.interval = 0.0  # the interval of the wait in progress

    def hold(self, model: type[Step], pk, generation: int) -> None:
        with self.lock:
            holders = self.held[(model, generation)]
            holders[pk] = holders.get(pk, 0) + 1
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="arena-step-leases",
                                               daemon=True)
                self.thread.start()
            elif self.interval > settings.ARENA_STEP_HEARTBEAT_SECONDS:
                self.wake.set()  # the interval was shortened: start the shorter wait now

    def release(self, model: type[Step], pk, generation: int) -> None:
        with self.lock:
            holders = self.held.get((model, generation), {})
            if holders.get(pk, 0) <= 1:
                holders.pop(pk, None)
            else:
                holders[pk] -= 1
            if not holders:
                self.held.pop((model, generation), None)

    def _run(self) -> None:
        while True:
            self.interval = settings.ARENA_STEP_HEARTBEAT_SECONDS
            self.wake.wait(self.interval)
            self.wake.clear()
            with self.lock:
                batches = [(model, generation, list(holders))
                           for (model, generation), holders in self.held.items() if holders]
            for model, generation, pks in batches:
                try:
                    step_heartbeat(model, pks, generation)
                except Exception:  # a database blip: the next beat tries again
                    logger.warning("heartbeat of %d %s steps failed", len(pks),
                                   model._meta.label, exc_info=True)
            connection.close()


_keeper = _Keeper()


@contextmanager
def step_lease(model: type[Step], pk, generation: int) -> Iterator[None]:
    """Keep the step's lease alive while the block runs (the work of a claimed step)."""
    _keeper.hold(model, pk, generation)
    try:
        yield
    finally:
        _keeper.release(model, pk, generation)

"""The test worker is settled (so the database may be emptied) only once every task it was
given has finished: a flush under a running task deadlocked in CI."""

from __future__ import annotations

import threading

import pytest
from celery.worker import state

from arena.celery import app
from testkit.live import worker_idle, worker_settled
from testkit.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

RELEASE = threading.Event()
FINISHED: list[str] = []


@app.task(name="arena.tests.held_step")
def held_step(name: str, follower: str = "") -> None:
    """Queues its follower first (as a step queues the next), then waits to be released."""
    if follower:
        held_step.delay(follower)
    RELEASE.wait(60)
    FINISHED.append(name)


def test_the_worker_settles_only_after_a_task_and_its_follower(celery_worker):
    RELEASE.clear()
    FINISHED.clear()
    held_step.delay("first", "second")
    wait_for(lambda: not worker_idle(), what="the first task to start")
    assert not worker_settled()
    RELEASE.set()
    wait_for(worker_settled, what="both tasks to finish")
    assert sorted(FINISHED) == ["first", "second"]


def test_the_worker_settles_only_after_a_task_it_holds_for_later(celery_worker):
    """A countdown (a voted battle's classification is sent with one) keeps the task in the
    worker's timer, neither queued nor taken, until it is due."""
    RELEASE.set()
    FINISHED.clear()
    held_step.apply_async(("later",), countdown=0.5)
    wait_for(lambda: state.scheduled_requests, what="the worker to hold the task")
    assert not worker_settled()
    wait_for(worker_settled, what="the task held for later to run")
    assert FINISHED == ["later"]

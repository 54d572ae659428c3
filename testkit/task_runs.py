"""What a test's own Celery processes did, recorded in Redis for the test to read: each task
a beat sent (name, message id, the beat's process id) and each task a worker started (name,
message id, the worker's name).

A test loads it into its worker and beat processes through their settings
(``CELERY_IMPORTS = ["testkit.task_runs"]``: a worker and beat import those modules as they
start), so the processes run the arena's code unchanged and the record is kept where all of
them and the test can reach it: the one Redis they share. A counter in the processes' memory
could not be read by the test, and a log line's format is Celery's to change."""

from __future__ import annotations

import os

import redis
from celery import signals
from django.conf import settings

SENT_BY_BEAT = "testkit:task-runs:sent-by-beat"
STARTED = "testkit:task-runs:started"

_clients: dict[str, redis.Redis] = {}


def _redis() -> redis.Redis:
    url = settings.REDIS_URL
    if url not in _clients:
        _clients[url] = redis.Redis.from_url(url)
    return _clients[url]


@signals.beat_init.connect
def _record_in_beat(**kwargs) -> None:
    """Only what beat sends: a worker sends tasks too (a step its follower), and those are
    not the schedule's."""
    signals.after_task_publish.connect(_record_sent, weak=False)


@signals.worker_ready.connect
def _record_in_worker(**kwargs) -> None:
    """Only in a worker process of the test's own (the test process, which imports this
    module to read the record, may run a worker of its own in threads: not one of them)."""
    signals.task_prerun.connect(_record_started, weak=False)


def _record_sent(sender: str | None = None, headers: dict | None = None, **kwargs) -> None:
    _redis().rpush(SENT_BY_BEAT, f"{sender} {(headers or {})['id']} {os.getpid()}")


def _record_started(sender=None, task_id: str | None = None, task=None, **kwargs) -> None:
    _redis().rpush(STARTED, f"{sender.name} {task_id} {task.request.hostname}")


def forget(client: redis.Redis) -> None:
    """Start a test's record empty (the keys outlive a test on a shared Redis)."""
    client.delete(SENT_BY_BEAT, STARTED)


def sent_by_beat(client: redis.Redis) -> list[tuple[str, str, str]]:
    """``(task name, message id, beat's process id)`` of every task a beat sent, in order."""
    return [tuple(entry.decode().split(" ")) for entry in client.lrange(SENT_BY_BEAT, 0, -1)]


def started(client: redis.Redis) -> list[tuple[str, str, str]]:
    """``(task name, message id, worker name)`` of every task a worker started, in order."""
    return [tuple(entry.decode().split(" ")) for entry in client.lrange(STARTED, 0, -1)]

"""Workers and beat as the page sees them: beat stamps the time as it sends a scheduled task
(in the beat process only), and reads as late past twice the schedule's shortest interval."""

from __future__ import annotations

import time

import pytest

from arena.readiness import beat_key, beat_last_seen, beat_seen
from ops.health import BEAT_GRACE_SECONDS, beat_health, beat_shortest_interval


@pytest.fixture
def no_beat_yet():
    from arena.broker import broker_redis

    broker_redis().delete(beat_key())
    yield
    broker_redis().delete(beat_key())


def test_beat_is_late_until_it_has_sent_a_task(no_beat_yet):
    from django.utils import timezone

    health = beat_health(now=timezone.now())
    assert (health.state, health.summary) == ("late", "beat has not sent a task in the last week")


def test_beat_is_ok_within_twice_its_shortest_interval_and_late_after(no_beat_yet, settings):
    from datetime import UTC, datetime

    settings.CELERY_BEAT_SCHEDULE = {**settings.CELERY_BEAT_SCHEDULE,
                                     "fast": {"task": "x", "schedule": 1.5}}
    assert beat_shortest_interval() == 1.5
    seen = time.time() - 1000
    beat_seen(now=seen)
    assert beat_last_seen() == pytest.approx(seen)
    limit = 2 * 1.5 + BEAT_GRACE_SECONDS
    ok = beat_health(now=datetime.fromtimestamp(seen + limit - 1, tz=UTC))
    assert ok.state == "ok" and ok.summary.startswith(f"beat last seen {limit - 1:.0f} s ago")
    late = beat_health(now=datetime.fromtimestamp(seen + limit + 1, tz=UTC))
    assert late.state == "late"


def test_only_the_beat_process_stamps_as_it_sends(no_beat_yet, monkeypatch):
    from celery import signals

    import arena.celery

    signals.before_task_publish.send(sender="arena.tasks.steps_requeue_stale")
    assert beat_last_seen() is None  # a web process or a worker sending a task: not beat
    monkeypatch.setattr(arena.celery, "_in_beat", False)
    signals.beat_init.send(sender=None)
    assert arena.celery._in_beat
    before = time.time()
    signals.before_task_publish.send(sender="arena.tasks.steps_requeue_stale")
    assert beat_last_seen() >= before


def test_workers_are_counted_from_their_heartbeat(settings):
    from arena.readiness import worker_beat, worker_gone
    from ops.health import workers_health

    settings.CELERY_TASK_DEFAULT_QUEUE = "ops-health-test"  # a set no real worker beats into
    assert workers_health().state == "late"
    worker_beat("w1@here")
    worker_beat("w2@here")
    assert (workers_health().state, workers_health().summary) == ("ok", "2 workers alive")
    worker_gone("w1@here")
    worker_gone("w2@here")
    assert workers_health().state == "late"

"""Live and ready: /healthz/live answers whenever the process does; /healthz/ready only when a
worker beats and the local models have settled, naming what it waits for otherwise."""

from __future__ import annotations

import os
import time
import uuid

import pytest
from django.test import Client

from arena.health import ready_report
from arena.local_models.specs import clear_instance, write_instance
from arena.readiness import (
    FRESH_SECONDS,
    WorkerHeartbeat,
    local_models_state,
    worker_beat,
    worker_beats,
    worker_gone,
    workers_alive,
    workers_key,
)
from testkit.live import start_worker_process, stop_process
from testkit.waiting import wait_for


@pytest.fixture
def no_workers(settings):
    """A queue of the test's own, which no worker consumes (the test kit's session worker
    beats for the usual one)."""
    from arena.broker import broker_redis

    settings.CELERY_TASK_DEFAULT_QUEUE = f"readiness-{uuid.uuid4().hex[:8]}"
    yield
    broker_redis().delete(workers_key())


@pytest.fixture
def local_models_off(settings):
    settings.ARENA_LOCAL_MODELS = False


@pytest.fixture
def instance_record(settings, tmp_path, monkeypatch):
    """A local-models record of this process in a var folder of the test's own."""
    monkeypatch.setenv("ARENA_VAR_DIR", str(tmp_path))
    settings.ARENA_LOCAL_MODELS = True

    def write(**extra) -> None:
        write_instance({"pid": os.getpid(), "token": "t", "ports": {}, **extra})

    yield write
    clear_instance(os.getpid())


def test_a_worker_counts_while_it_beats_and_not_once_silent_or_gone(no_workers):
    now = time.time()
    assert workers_alive(now=now) == 0
    worker_beat("one@host", now=now)
    worker_beat("two@host", now=now - FRESH_SECONDS - 1)  # silent since
    assert workers_alive(now=now) == 1
    assert worker_beats("one@host", now=now) and not worker_beats("two@host", now=now)
    assert not worker_beats("never@host", now=now)
    worker_gone("one@host")
    assert workers_alive(now=now) == 0


def test_the_heartbeat_thread_beats_until_stopped_and_then_says_it_is_gone(no_workers):
    heartbeat = WorkerHeartbeat("threaded@host", interval=0.05).start()
    try:
        wait_for(lambda: worker_beats("threaded@host"), what="the first heartbeat")
    finally:
        heartbeat.stop()
    assert not worker_beats("threaded@host")


def test_a_heartbeat_outlives_redis_going_away_and_beats_again_when_it_is_back(
        no_workers, settings):
    heartbeat = WorkerHeartbeat("stubborn@host", interval=0.05)
    real_url = settings.REDIS_URL
    settings.REDIS_URL = "redis://127.0.0.1:9/0"  # nothing listens there
    heartbeat.start()
    try:
        wait_for(lambda: heartbeat.failures >= 2, what="beats refused by an absent Redis")
        settings.REDIS_URL = real_url
        wait_for(lambda: worker_beats("stubborn@host"), what="a beat once Redis is back")
    finally:
        settings.REDIS_URL = real_url
        heartbeat.stop()


def test_a_web_process_is_warm_once_it_says_so(no_workers):
    from arena.broker import broker_redis
    from arena.readiness import web_is_warm, web_warm_key, web_warmed

    broker_redis().delete(web_warm_key())
    assert not web_is_warm(4242)
    web_warmed(4242)
    assert web_is_warm(4242) and not web_is_warm(4243)


def test_local_models_are_starting_until_their_record_says_settled(instance_record, settings):
    assert local_models_state() == "starting"  # no record yet
    instance_record()
    assert local_models_state() == "starting"
    instance_record(settled=True)
    assert local_models_state() == "settled"
    settings.ARENA_LOCAL_MODELS = False
    assert local_models_state() == "off"


@pytest.mark.django_db
def test_ready_waits_for_a_worker_and_says_so(no_workers, local_models_off):
    report = ready_report()
    assert not report["ok"]
    assert report["starting"] == ["workers"]
    assert "the workers that run the models" in report["detail"]
    worker_beat("ready@host")
    report = ready_report()
    assert report["ok"] and report["starting"] == []


@pytest.mark.django_db
def test_ready_waits_for_the_local_models_too(no_workers, instance_record):
    worker_beat("ready@host")
    instance_record()
    assert ready_report()["starting"] == ["local_models"]
    instance_record(settled=True)
    assert ready_report()["ok"]


@pytest.mark.django_db
def test_healthz_live_answers_and_ready_answers_503_naming_what_it_waits_for(
        client: Client, no_workers, local_models_off):
    live = client.get("/healthz/live")
    assert live.status_code == 200 and live.json() == {"ok": True}

    waiting = client.get("/healthz/ready")
    assert waiting.status_code == 503
    body = waiting.json()
    assert body["ok"] is False and body["starting"] == ["workers"]
    assert body["workers"] == {"ok": False}  # states only: no names or counts
    assert "the workers that run the models" in body["detail"]

    worker_beat("ready@host")
    ready = client.get("/healthz/ready")
    assert ready.status_code == 200
    assert ready.json()["ok"] is True and ready.json()["detail"] == "The arena is ready."


@pytest.mark.django_db
def test_ready_is_503_while_redis_is_unreachable(client: Client, settings, local_models_off):
    settings.REDIS_URL = "redis://127.0.0.1:9/0"
    response = client.get("/healthz/ready")
    assert response.status_code == 503
    assert set(response.json()["starting"]) == {"redis", "workers"}
    assert client.get("/healthz/live").status_code == 200


def test_a_worker_process_beats_once_ready_and_stops_counting_when_stopped(
        test_process_env, settings):
    queue = f"readiness-{uuid.uuid4().hex[:8]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue  # the heartbeat set is the queue's
    process = start_worker_process({**test_process_env, "CELERY_QUEUE": queue}, queue=queue)
    try:
        assert wait_for(lambda: workers_alive() == 1, what="the worker's first heartbeat")
    finally:
        stop_process(process)
    # Gone at its shutdown (or, killed after its grace, once its last beat is stale).
    assert wait_for(lambda: workers_alive() == 0, what="the stopped worker to stop counting")

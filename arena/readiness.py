"""What readiness is made of: the workers' heartbeat and the local models' start.

A process is *live* when it answers at all. The arena is *ready* when a battle sent now is
answered at warm speed: its database and Redis answer, a Celery worker has loaded what a
task needs and is consuming the queue, and (with ``ARENA_LOCAL_MODELS`` on) the local model
servers have finished starting. :func:`arena.health.ready_report` puts the parts together;
the run command prints its address only when it is ok, and ``/healthz/ready`` says the same
to a load balancer or a person, naming what is still starting.

Workers are seen through a heartbeat rather than a broadcast ping: each worker process, once
ready, writes its name and the time into a Redis sorted set every ``HEARTBEAT_SECONDS``, and
readiness counts the names written in the last ``FRESH_SECONDS``. A ping needs a reply from
the worker through the broker, with a producer pool that can hang on a broker gone away; the
heartbeat is one ``ZADD`` with a timeout, read with one ``ZCOUNT``.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable

import redis
from django.conf import settings

from arena.broker import broker_redis
from arena.local_models.specs import read_instance

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 2.0
FRESH_SECONDS = 3 * HEARTBEAT_SECONDS
FORGET_SECONDS = 60.0  # a worker silent this long is removed from the set


def answered(check: Callable[[], object]) -> bool:
    """``check()``'s answer, False while Redis does not answer (the caller asks again)."""
    try:
        return bool(check())
    except redis.RedisError:
        return False


def workers_key() -> str:
    """The sorted set of this arena's workers (its cache prefix and queue: a second arena or
    a test run on the same Redis has its own)."""
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    return f"{prefix}:workers:{settings.CELERY_TASK_DEFAULT_QUEUE}"


def worker_beat(name: str, *, now: float | None = None, key: str | None = None) -> None:
    """Say that worker ``name`` is alive and consuming now (in ``key``: the set of the queue
    it consumes, by default the settings' queue)."""
    now = time.time() if now is None else now
    key = key or workers_key()
    pipe = broker_redis().pipeline()
    pipe.zadd(key, {name: now})
    pipe.zremrangebyscore(key, "-inf", now - FORGET_SECONDS)
    pipe.expire(key, int(FORGET_SECONDS))
    pipe.execute()


def worker_gone(name: str, *, key: str | None = None) -> None:
    """A worker that stops says so, so that readiness does not count it for FRESH_SECONDS."""
    try:
        broker_redis().zrem(key or workers_key(), name)
    except redis.RedisError:
        logger.info("could not remove worker %s from the heartbeat set", name)


def workers_alive(*, now: float | None = None) -> int:
    """How many workers beat in the last FRESH_SECONDS (raises redis.RedisError)."""
    now = time.time() if now is None else now
    return broker_redis().zcount(workers_key(), now - FRESH_SECONDS, "+inf")


def worker_beats(name: str, *, now: float | None = None) -> bool:
    """Whether worker ``name`` beat in the last FRESH_SECONDS (raises redis.RedisError)."""
    now = time.time() if now is None else now
    score = broker_redis().zscore(workers_key(), name)
    return score is not None and score >= now - FRESH_SECONDS


class WorkerHeartbeat:
    """A daemon thread that beats for one worker until stopped. Redis errors are logged
    once per outage and the beats go on: a worker outlives a Redis restart."""

    def __init__(self, name: str, interval: float = HEARTBEAT_SECONDS) -> None:
        self.name, self.interval = name, interval
        self.key = workers_key()  # the queue it consumes, as it started
        self.failures = 0  # beats that Redis did not take
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-worker-heartbeat",
                                        daemon=True)

    def start(self) -> WorkerHeartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval + 2)
        worker_gone(self.name, key=self.key)

    def _run(self) -> None:
        failing = False
        while True:
            try:
                worker_beat(self.name, key=self.key)
                if failing:
                    logger.info("worker heartbeat: Redis answers again")
                failing = False
            except redis.RedisError as exc:
                self.failures += 1
                if not failing:
                    logger.warning("worker heartbeat: Redis does not answer (%s); retrying",
                                   type(exc).__name__)
                failing = True
            if self._stop.wait(self.interval):
                return


def beat_key() -> str:
    """When celery beat last sent a scheduled task (this arena's prefix and queue)."""
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    return f"{prefix}:beat:{settings.CELERY_TASK_DEFAULT_QUEUE}"


def beat_seen(*, now: float | None = None) -> None:
    """Celery beat sends a scheduled task now (:mod:`arena.celery` calls this in the beat
    process only): the operations page shows how long ago, against the shortest interval of
    the schedule. Kept a week, so a beat stopped for days still shows when it last ran."""
    broker_redis().set(beat_key(), time.time() if now is None else now, ex=7 * 24 * 3600)


def beat_last_seen() -> float | None:
    """The time beat last sent a task; None if it has not in a week (raises
    redis.RedisError)."""
    value = broker_redis().get(beat_key())
    return float(value) if value is not None else None


def web_warm_key() -> str:
    return f"{settings.CACHES['default']['KEY_PREFIX']}:web-warm"


def web_warmed(pid: int) -> None:
    """Web process ``pid`` has run every mode's warm-up (arena.webserver.warm_up_once_serving)."""
    try:
        pipe = broker_redis().pipeline()
        pipe.sadd(web_warm_key(), f"{socket.gethostname()}:{pid}")
        pipe.expire(web_warm_key(), 7 * 24 * 3600)
        pipe.execute()
    except redis.RedisError:
        logger.warning("could not record that web process %d is warm", pid)


def web_is_warm(pid: int) -> bool:
    """Whether web process ``pid`` of this machine said it is warm (raises redis.RedisError)."""
    return bool(broker_redis().sismember(web_warm_key(), f"{socket.gethostname()}:{pid}"))


def local_models_state() -> str:
    """"off" (not used), "starting" (their servers are loading) or "settled" (each one
    ready, or given up on with its reason logged)."""
    if not settings.ARENA_LOCAL_MODELS:
        return "off"
    record = read_instance()
    return "settled" if record and record.get("settled") else "starting"

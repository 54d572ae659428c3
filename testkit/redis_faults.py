"""A Redis of a test's own that the test may pause, kill and start again: the same
redis-server the run command embeds, on a unix socket of the test's, keeping nothing on disk
(a killed one comes back empty, as the embedded one does).

``private_redis`` points this process's cache, rate limits, channel layer and stream
snapshots at it; :func:`arena_on` runs daphne and a Celery worker on it, each its own process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.embedded_redis import start_embedded_redis, stop_embedded_redis
from testkit.live import daphne_server, start_worker_process, stop_process


class PrivateRedis:
    def __init__(self, socket: Path) -> None:
        self.socket = socket
        self.process = start_embedded_redis(socket)

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def env(self, base: dict[str, str]) -> dict[str, str]:
        return {**base, "REDIS_URL": self.url}

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """SIGSTOP while the block runs: a stalled server (or a network dropping packets)
        that keeps its connections open and answers nothing."""
        os.kill(self.process.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(self.process.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL, as when its machine loses the process: connections reset, data gone."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None

    def start(self) -> None:
        """Start it again, empty, on the same socket."""
        self.process = start_embedded_redis(self.socket)

    def stop(self) -> None:
        stop_embedded_redis(self.process, self.socket)
        self.process = None


@pytest.fixture
def private_redis(tmp_path, settings, monkeypatch) -> Iterator[PrivateRedis]:
    import arena.cache
    import arena.ratelimit

    redis = PrivateRedis(tmp_path / "redis.sock")
    settings.REDIS_URL = redis.url
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": redis.url}}
    layer = settings.CHANNEL_LAYERS["default"]
    settings.CHANNEL_LAYERS = {"default": {**layer, "CONFIG": {**layer["CONFIG"],
                                                               "hosts": [redis.url]}}}
    monkeypatch.setattr(arena.ratelimit, "_limiter", None)  # the limits' store: this Redis
    monkeypatch.setattr(arena.cache, "_skip_until", 0.0)  # and no other test's skipping
    try:
        yield redis
    finally:
        if redis.process is not None and redis.process.poll() is None:
            os.kill(redis.process.pid, signal.SIGCONT)  # a failed test may leave it paused
        redis.stop()


@contextlib.contextmanager
def arena_on(redis: PrivateRedis, env: dict[str, str], *,
             queue: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """daphne and a Celery worker on ``redis`` (and the test database: ``env`` is
    ``test_process_env``), the worker taking ``queue``, which daphne sends to: the base URL and
    the worker's process, which a test may watch to see it outlive a fault."""
    env = {**env, "REDIS_URL": redis.url, "CELERY_QUEUE": queue, "CACHE_PREFIX": queue}
    worker = start_worker_process(env, queue=queue)
    try:
        with daphne_server(env) as base_url:
            yield base_url, worker
    finally:
        if redis.process is not None:
            os.kill(redis.process.pid, signal.SIGCONT)  # a failed test may leave it paused
        stop_process(worker, grace=15)

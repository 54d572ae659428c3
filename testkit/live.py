"""Real moving parts for tests: a Celery worker (threads, in this process, on the
real broker) and a daphne server (its own process, on the test database), so
pages, sockets and tasks are exercised the way they run in production."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from django.conf import settings

from arena.webserver import daphne_command, worker_command
from testkit.waiting import ceiling, wait_for

_session_worker_running = False  # once a test has started the session's worker
_session_worker = None


@pytest.fixture(scope="session")
def celery_worker_session(django_db_blocker) -> Iterator[object]:
    from celery.contrib.testing.worker import start_worker

    from arena.celery import app

    global _session_worker_running, _session_worker
    app.conf.task_always_eager = False
    from arena.readiness import WorkerHeartbeat

    with start_worker(app, pool="threads", concurrency=8, perform_ping_check=False,
                      loglevel="WARNING", shutdown_timeout=10) as worker:
        # Celery's test worker sends no worker_ready, where a real one starts its heartbeat:
        # started here, so that what looks for a running worker (readiness, a command
        # that starts its own otherwise) finds this one.
        heartbeat = WorkerHeartbeat(worker.hostname).start()
        _session_worker_running, _session_worker = True, worker
        try:
            yield worker
        finally:
            _session_worker_running = False
            heartbeat.stop()


def worker_idle() -> bool:
    """No task is running in the test's Celery worker (it runs in this process)."""
    from celery.worker import state

    return not state.active_requests


def worker_drained() -> bool:
    """No task running in the test's worker, and none it has taken and not yet started."""
    from celery.worker import state

    return not state.active_requests and not state.reserved_requests


def _taken_unread() -> bool:
    """A task the broker has handed the worker (its BRPOP answered: the message is off the
    queue) that the worker has not read yet: on a busy machine it waits there, neither
    queued nor reserved, for as long as the worker's thread is kept from running."""
    try:
        sock = _session_worker.consumer.task_consumer.channel.client.connection._sock
    except AttributeError:  # no worker, or not consuming yet
        return False
    return sock is not None and bool(select.select([sock], [], [], 0)[0])


def worker_settled() -> bool:
    """Drained, no task it holds for later (a countdown: a voted battle's classification),
    none taken from the broker and not yet read, and none waiting for it on the broker. A
    task sends the next one (a step its follower) while it still runs, so the follower is
    queued, taken or running whenever the worker is seen drained; the second look catches
    one taken in between."""
    from celery.worker import state

    from arena.celery import app

    def idle() -> bool:
        return worker_drained() and not state.scheduled_requests

    if not idle():
        return False
    with app.pool.acquire(block=True) as connection:
        queued = connection.default_channel.queue_declare(
            queue=app.conf.task_default_queue).message_count
    return not queued and not _taken_unread() and idle()


def wait_until_worker_settled() -> None:
    """Wait, if the session's worker runs, until it is settled: before the database is
    emptied, since a task still writing while the tables are truncated deadlocks the flush
    (and the next test would find the last one's rows)."""
    if _session_worker_running:
        wait_for(worker_settled, timeout=120, what="the worker's tasks to finish before the flush")


@pytest.fixture
def celery_worker(celery_worker_session, transactional_db):
    """A running worker; the test's writes are committed so the worker sees them (the root
    conftest settles it before the flush)."""
    return celery_worker_session


@pytest.fixture(scope="session")
def test_process_env(django_db_setup, tmp_path_factory) -> dict[str, str]:
    """The environment of a process of our own (daphne, a Celery worker) on the test database.

    Such a process is a fresh interpreter, not a fork: a fork copies the locks other threads
    hold at that moment (the Celery worker's, the database pool's); a forked daphne sometimes
    hung before listening. A settings module that names the test database lets it inherit
    nothing but the environment (Redis, var folder) and open its own connections.
    """
    from django.db import connection

    folder = tmp_path_factory.mktemp("live_server")
    (folder / "live_server_settings.py").write_text(
        "from arena.settings import *  # noqa: F403\n"
        f"DATABASES['default']['NAME'] = {str(connection.settings_dict['NAME'])!r}\n"
    )
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "live_server_settings",
            "PYTHONPATH": os.pathsep.join([str(folder), str(settings.BASE_DIR)])}


LEASE_SECONDS, HEARTBEAT_SECONDS = "1", "0.2"


@pytest.fixture
def short_leases(settings):
    """Step leases of a second, heartbeats five times a second: a dead worker is noticed in
    a second (the test's own worker and sweep; :func:`doomed_worker` gives its the same)."""
    settings.ARENA_STEP_LEASE_SECONDS = float(LEASE_SECONDS)
    settings.ARENA_STEP_HEARTBEAT_SECONDS = float(HEARTBEAT_SECONDS)
    return settings


@contextlib.contextmanager
def doomed_worker(env: dict[str, str], monkeypatch: pytest.MonkeyPatch, *,
                  queue: str = "doomed") -> Iterator[Callable[[], None]]:
    """A real worker process, on a queue of its own, that the block's steps are sent to (and
    the steps it creates itself), with leases of a second; the block gets its ``kill`` (a
    SIGKILL, as when a machine loses the process), and it is dead when the block ends."""
    import arena.steps
    from arena.celery import app

    env = {**env, "ARENA_STEP_LEASE_SECONDS": LEASE_SECONDS,
           "ARENA_STEP_HEARTBEAT_SECONDS": HEARTBEAT_SECONDS, "CELERY_QUEUE": queue}
    process = start_worker_process(env, queue=queue)

    def kill() -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)

    try:
        with monkeypatch.context() as patched:
            patched.setattr(arena.steps, "send_task", lambda name, args: app.send_task(
                name, args=args, queue=queue))
            yield kill
    finally:
        kill()


def steps_started_over(count: int) -> int:
    """Sweep until ``count`` steps whose worker died are started over; how many were."""
    return sweep_until(lambda restarted: restarted >= count,
                       what=f"{count} killed step(s) to be started over")


def sweep_until(done: Callable[[int], object], *, what: str, timeout: float = 30.0) -> int:
    """Sweep for dead workers' steps, as beat does, until ``done(started over so far)``;
    how many steps were started over."""
    from arena.steps import step_requeue_stale
    from testkit.waiting import wait_for

    restarted = 0

    def enough() -> object:
        nonlocal restarted
        restarted += step_requeue_stale()
        return done(restarted)

    wait_for(enough, timeout, what=what)
    return restarted


def start_worker_process(env: dict[str, str], *, queue: str,
                         name: str | None = None) -> subprocess.Popen:
    """A real ``celery worker`` process (threads) consuming only ``queue``, in its own process
    group so a test can kill it outright; ``name`` tells several on one queue apart."""
    return subprocess.Popen(
        worker_command(queue=queue, threads=4, loglevel="WARNING", name=name,
                       extra=("--without-heartbeat",)),
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )


@contextlib.contextmanager
def daphne_server(env: dict[str, str], host: str = "127.0.0.1") -> Iterator[str]:
    """daphne in its own process with ``env``, serving until the block ends: its base URL."""
    process, base_url = start_daphne(env, host)
    try:
        yield base_url
    finally:
        stop_process(process)


def start_daphne(env: dict[str, str], host: str = "127.0.0.1") -> tuple[subprocess.Popen, str]:
    """daphne in its own process with ``env`` on a free port of ``host``, once it serves: the
    process (a test that kills it mid-request needs it; stop it with :func:`stop_process`)
    and its base URL."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        daphne_command(host, port),
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    base_url = f"http://{host}:{port}"
    try:
        _wait_until_serving(process, base_url)
    except BaseException:
        stop_process(process)
        raise
    return process, base_url


def stop_process(process: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if it has not stopped within ``grace`` seconds."""
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="session")
def asgi_live_server_session(test_process_env) -> Iterator[str]:
    """daphne in its own process on the test database (see :func:`test_process_env`)."""
    with daphne_server(test_process_env) as base_url:
        yield base_url


def _wait_until_serving(process: subprocess.Popen, base_url: str) -> None:
    deadline = time.monotonic() + ceiling(60)
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited: {process.stderr.read().decode()[-2000:]}")
        try:
            httpx.get(f"{base_url}/healthz", timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    process.terminate()
    raise RuntimeError(f"daphne did not start for the live server within {ceiling(60):.0f} s")


@pytest.fixture
def asgi_live_server(asgi_live_server_session, transactional_db) -> str:
    return asgi_live_server_session


def keyless(fake, models, *, token_delay: float = 0.0) -> None:
    """Let a live server (its own process) call ``fake`` for ``models`` without a key.

    The server process started before this test's fake put its random key into the
    environment, so it could not read it: the fake asks for none, the models name none."""
    fake.api_key = None
    fake.token_delay = token_delay
    for model in models:
        model.api_key_env = ""
        model.save(update_fields=["api_key_env"])

"""How the arena's processes (daphne, the Celery workers) are started, in one place for the
run command, the live-server tests, the benchmarks and the commands that need a worker."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis
from django.conf import settings
from django.core.management.base import CommandError
from django.urls import get_resolver

from arena import heap, modes
from arena.readiness import answered, web_warmed, worker_beats, workers_alive

# Twisted listens with a queue of 50 by default: in a burst of new connections the kernel
# drops the rest, and each dropped client waits a whole second before TCP tries again.
LISTEN_BACKLOG = 1024


def daphne_command(host: str, port: int | str) -> list[str]:
    """The command line of daphne serving the arena on ``host:port``."""
    host = host.strip("[]").replace(":", r"\:")
    endpoint = f"tcp:port={int(port)}:interface={host}:backlog={LISTEN_BACKLOG}"
    return [sys.executable, "-m", "daphne", "-e", endpoint, "arena.asgi:application"]


def web_socket(host: str, port: int) -> socket.socket:
    """The web port, listened on once and shared by every daphne process of the run command
    (:func:`daphne_shared_command`): the kernel hands each new connection to one of them, so
    the web side uses every core as the workers do. Port 0: a free one."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError:
        listener.close()
        raise
    listener.listen(LISTEN_BACKLOG)
    listener.set_inheritable(True)
    return listener


def web_answers(port: int, host: str = "127.0.0.1", timeout: float = 1.0) -> bool:
    """Whether a web server on ``host:port`` answers now: ``GET /healthz/live`` gets a status line
    within ``timeout``. A port bound by :func:`web_socket` accepts connections before any
    daphne serves it (they wait in its queue), so connecting alone proves nothing."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as probe:
            probe.sendall(b"GET /healthz/live HTTP/1.0\r\n\r\n")
            return probe.recv(12).startswith(b"HTTP/1.")
    except OSError:
        return False


def accept_one_at_a_time() -> None:
    """Make this process's Twisted accept one connection per wakeup (it takes up to a
    hundred, then more). Every daphne of the run command waits on the same socket
    (:func:`web_socket`): taking one and going back to the loop lets the least busy process
    take the next, so a burst of new connections spreads over the processes instead of
    landing mostly on the first one awake (seen: two to one, the busier one CPU-bound)."""
    from twisted.internet import tcp  # noqa: PLC0415 - Twisted (0.26 s): daphne's process only

    tcp.Port.numberAccepts = property(lambda port: 1, lambda port, value: None)


def access_log_through_logging() -> None:
    """With ``LOG_FORMAT=json``, daphne's access log goes through logging (logger
    ``daphne.access``), so that its lines are JSON lines too: daphne writes them straight to
    stdout in a format of its own. Its command line picks the writer once it has imported the
    application, which is where this runs; a process that only imports the application (a
    test, a probe) changes nothing. The lines carry no request id: daphne writes them after
    the response, outside the request (the response's ``X-Request-ID`` says it)."""
    cli = sys.modules.get("daphne.cli")
    if cli is None or settings.LOG_FORMAT != "json":
        return
    from daphne.access import AccessLogGenerator  # noqa: PLC0415 - daphne's process only

    access = logging.getLogger("daphne.access")

    class LoggedAccess(AccessLogGenerator):
        def write_entry(self, host, date, request, status=None, length=None, ident=None,
                        user=None) -> None:
            access.info('%s "%s" %s %s', host, request, status or "-", length or "-")

    cli.AccessLogGenerator = LoggedAccess


def settle_heap() -> None:
    """Once a server process has loaded everything it serves: :func:`arena.heap.settle`. The
    loaded URL configuration imports every view and API first, so that they are frozen too."""
    get_resolver().url_patterns  # noqa: B018 - imported for what it loads
    heap.settle()


_warmed = threading.Event()


def warmed_up() -> bool:
    """Whether this web process has run every mode's warm-up (:func:`warm_up_once_serving`):
    what a readiness check that should wait for it asks."""
    return _warmed.is_set()


def warm_up_once_serving() -> None:
    """In a server process running a Twisted reactor (daphne): once it runs, warm every mode
    up (:func:`arena.modes.warm_up`: the offline voice agent's models) in a thread of its
    own, then settle the heap again, so that what they loaded is out of the collector's sight
    too. The server answers meanwhile, and a call that comes first loads what it needs
    itself; a process that only imports the application (a test, a probe) warms nothing."""
    reactor = sys.modules.get("twisted.internet.reactor")
    if reactor is None:
        return
    reactor.callWhenRunning(lambda: threading.Thread(target=_warm_up, name="warm-up",
                                                     daemon=True).start())


def _warm_up() -> None:
    from django.db import connections  # noqa: PLC0415 - this thread's own connections

    try:
        modes.warm_up()
    finally:
        connections.close_all()
    settle_heap()
    _warmed.set()
    web_warmed(os.getpid())  # the run command waits for it before it gives the address


def daphne_shared_command(listener: socket.socket) -> list[str]:
    """daphne accepting on ``listener`` (inherited: start it with ``pass_fds``)."""
    return [sys.executable, "-m", "daphne", "-e", f"fd:fileno={listener.fileno()}",
            "arena.asgi:application"]


def worker_command(index: int = 0, *, queue: str | None = None, loglevel: str = "INFO",
                   threads: int | None = None, name: str | None = None,
                   extra: tuple[str, ...] = ()) -> list[str]:
    """The command line of the arena's Celery worker number ``index`` (threads pool), named
    ``name`` if given; ``extra`` adds options.

    The run command starts ``CELERY_WORKER_PROCESSES`` of them, one per core by default: a
    worker holds hundreds of model streams on one event loop, but its Python code (the
    provider SDK, the relay, the ORM) runs under one interpreter lock, so one process uses
    one core at most."""
    queue = queue or settings.CELERY_TASK_DEFAULT_QUEUE
    return [
        sys.executable, "-m", "celery", "-A", "arena", "worker", "--pool", "threads",
        "--concurrency", str(threads or settings.CELERY_WORKER_CONCURRENCY), "-Q", queue,
        "-n", name or f"{queue}-{index}@%h", "--loglevel", loglevel, "--without-gossip",
        "--without-mingle", *extra,
    ]


WORKER_START_SECONDS = 60


@contextmanager
def command_worker(say: Callable[[str], object], prefix: str, *,
                   always: bool = False) -> Iterator[None]:
    """For a management command that runs mode work (a panel, debates): start a Celery
    worker process for as long as the block runs, unless a worker of this arena beats
    (:mod:`arena.readiness`; ``always``: start one anyway). ``say`` tells the person what
    happens."""
    try:
        running = not always and workers_alive() > 0
    except redis.RedisError as exc:  # Redis itself is down
        raise CommandError(f"Redis is not reachable ({exc}); start the arena "
                           "(python3 dev.py run) or set REDIS_URL.") from None
    if running:
        yield
        return
    say("[dim]Starting a Celery worker for this command.[/dim]")
    name = f"{prefix}-{os.getpid()}@{socket.gethostname()}"
    process = subprocess.Popen(
        worker_command(name=name, threads=8, loglevel="WARNING"),
        cwd=settings.BASE_DIR, stdout=sys.stderr, stderr=sys.stderr, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + WORKER_START_SECONDS
        while not answered(lambda: worker_beats(name)):
            if process.poll() is not None or time.monotonic() > deadline:
                raise CommandError("Could not start a Celery worker; start the arena "
                                   "(python3 dev.py run) and try again.")
            time.sleep(0.25)
        yield
    finally:
        process.terminate()  # a warm shutdown: tasks still running are finished first
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

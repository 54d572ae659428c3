"""How the arena's processes (daphne, the Celery workers) are started, in one place for the
run command, the live-server tests and the benchmarks."""

from __future__ import annotations

import sys

# Twisted listens with a queue of 50 by default: in a burst of new connections the kernel
# drops the rest, and each dropped client waits a whole second before TCP tries again.
LISTEN_BACKLOG = 1024


def daphne_command(host: str, port: int | str) -> list[str]:
    """The command line of daphne serving the arena on ``host:port``."""
    host = host.strip("[]").replace(":", r"\:")
    endpoint = f"tcp:port={int(port)}:interface={host}:backlog={LISTEN_BACKLOG}"
    return [sys.executable, "-m", "daphne", "-e", endpoint, "arena.asgi:application"]


def worker_command(index: int = 0, *, queue: str | None = None, loglevel: str = "INFO",
                   threads: int | None = None, name: str | None = None,
                   extra: tuple[str, ...] = ()) -> list[str]:
    """The command line of the arena's Celery worker number ``index`` (threads pool), named
    ``name`` if given; ``extra`` adds options.

    The run command starts ``CELERY_WORKER_PROCESSES`` of them, one per core by default: a
    worker holds hundreds of model streams on one event loop, but its Python code (the
    provider SDK, the relay, the ORM) runs under one interpreter lock, so one process uses
    one core at most."""
    from django.conf import settings

    queue = queue or settings.CELERY_TASK_DEFAULT_QUEUE
    return [
        sys.executable, "-m", "celery", "-A", "arena", "worker", "--pool", "threads",
        "--concurrency", str(threads or settings.CELERY_WORKER_CONCURRENCY), "-Q", queue,
        "-n", name or f"{queue}-{index}@%h", "--loglevel", loglevel, "--without-gossip",
        "--without-mingle", *extra,
    ]

"""Real moving parts for tests: a Celery worker (threads, in this process, on the
real broker) and a daphne server (a forked process, on the test database), so
pages, sockets and tasks are exercised the way they run in production."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import pytest


@pytest.fixture(scope="session")
def celery_worker_session(django_db_blocker) -> Iterator[object]:
    from celery.contrib.testing.worker import start_worker

    from arena.celery import app

    app.conf.task_always_eager = False
    with start_worker(app, pool="threads", concurrency=8, perform_ping_check=False,
                      loglevel="WARNING", shutdown_timeout=10) as worker:
        yield worker


@pytest.fixture
def celery_worker(celery_worker_session, transactional_db):
    """A running worker; the test's writes are committed so the worker sees them."""
    return celery_worker_session


def _asgi_application():
    from channels.routing import get_default_application
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    return ASGIStaticFilesHandler(get_default_application())


@pytest.fixture(scope="session")
def asgi_live_server_session(django_db_setup, django_db_blocker) -> Iterator[str]:
    """daphne forked from this process, so it inherits the test database settings.

    * The fork would copy pytest-django's database blocker as it is outside a test
      (blocked), so the server unblocks it at start.
    * psycopg's pool outlives ``close_all()``: parent and child would share its sockets
      and read each other's results. The pool is closed before the fork.
    """
    from daphne.testing import DaphneProcess
    from django.db import connections

    with django_db_blocker.unblock():
        connections.close_all()
        for connection in connections.all(initialized_only=True):
            if getattr(connection, "pool", None) is not None:
                connection.close_pool()
    process = DaphneProcess("127.0.0.1", partial(_asgi_application),
                            setup=django_db_blocker.unblock)
    process.start()
    if not process.ready.wait(timeout=30):
        process.terminate()
        raise RuntimeError("daphne did not start for the live server")
    try:
        yield f"http://127.0.0.1:{process.port.value}"
    finally:
        process.terminate()
        process.join(10)


@pytest.fixture
def asgi_live_server(asgi_live_server_session, transactional_db) -> str:
    return asgi_live_server_session

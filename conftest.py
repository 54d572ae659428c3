"""Root fixtures: the fake providers, a real Celery worker, a live ASGI server."""

import pytest

pytest_plugins = ["testkit.fixtures", "testkit.live", "testkit.browser",
                  "testkit.steps", "testkit.redis_faults"]


@pytest.fixture
def _django_db_helper(_django_db_helper):
    """pytest-django's database for one test, emptied only once the session's Celery worker
    has nothing left to run: a test may end while work it started goes on (a voice call's
    evaluation steps), and every test that uses the database gets this."""
    yield
    from testkit.live import wait_until_worker_settled

    wait_until_worker_settled()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's test database, whose teardown does not fail on a connection some
    thread of the run still holds (threads started by the tests keep their thread-local
    connections until the interpreter exits): PostgreSQL refused to drop the database
    ("being accessed by other users"), which left it behind with a warning."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    import psycopg

    settings = connection.settings_dict
    with django_db_blocker.unblock(), psycopg.connect(
            host=settings["HOST"] or None, port=settings["PORT"] or None,
            user=settings["USER"] or None, password=settings["PASSWORD"] or None,
            dbname="postgres", autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE datname = %s AND pid <> pg_backend_pid()", [settings["NAME"]])



@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings):
    """Just before the test database is made: drop any connection pool made so far. On
    PostgreSQL Django makes a connection's pool the first time anything asks for a cursor
    (its health check reads the pool before connecting), with the database name of that
    moment; a test without database access that reaches for one (a model call whose ledger
    entry pytest-django refuses) ran first in a process and left a pool for the real
    database's name, through which the test database's migrations then failed, and with
    them every later test of that process."""
    from django.db import connections

    for connection in connections.all():
        if hasattr(connection, "close_pool"):
            connection.close_pool()

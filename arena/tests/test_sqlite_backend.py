"""The SQLite backend's write queue: a transaction holds the lock file from its start to its
commit or rollback, and a closed connection holds nothing."""

from __future__ import annotations

import fcntl
import os

import pytest
from django.db.utils import ConnectionHandler


@pytest.fixture
def scratch(tmp_path, django_db_blocker):
    """A connection of the arena's SQLite backend to a file of the test's own (not the test
    database: the test opens and ends its transactions itself)."""
    handler = ConnectionHandler({"default": {
        "ENGINE": "arena.sqlite", "NAME": str(tmp_path / "scratch.sqlite3"),
        "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 5}}})
    connection = handler["default"]
    with django_db_blocker.unblock():
        yield connection, tmp_path / "scratch.sqlite3.write-lock"
        connection.close()


def others_may_write(lock_file) -> bool:
    """Whether another connection (another open file) could take the write lock now."""
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # and with it any lock taken
    return True


def begin(connection) -> None:
    """What transaction.atomic does to start a transaction on SQLite."""
    connection.set_autocommit(False, force_begin_transaction_with_broken_autocommit=True)


@pytest.mark.parametrize("end", ["commit", "rollback"])
def test_a_transaction_holds_the_write_queue_until_it_ends(scratch, end):
    connection, lock_file = scratch
    begin(connection)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE t (v TEXT)")
        cursor.execute("INSERT INTO t VALUES ('x')")
    assert not others_may_write(lock_file)
    getattr(connection, end)()
    connection.set_autocommit(True)
    assert others_may_write(lock_file)


def test_closing_a_connection_in_a_transaction_frees_the_queue(scratch):
    connection, lock_file = scratch
    begin(connection)
    assert not others_may_write(lock_file)
    connection.close()
    assert others_may_write(lock_file)


def test_reads_outside_a_transaction_leave_the_queue_alone(scratch):
    connection, lock_file = scratch
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert others_may_write(lock_file)

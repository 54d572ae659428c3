"""Django's SQLite backend with a fair queue for the write lock.

SQLite lets one writer in at a time. A connection that finds the lock taken sleeps in its
busy handler and tries again: 1, 2, 5, 10 ... then 100 ms at a time, so under a burst the
unlucky ones sleep past many releases (a battle burst's slowest writes waited most of a
second). Here every transaction (``BEGIN IMMEDIATE``: the arena's SQLite transactions take
the write lock at once) first takes an exclusive ``flock`` on a file next to the database:
the kernel wakes the next waiter the moment the lock is released, across the run command's
processes and threads alike (each connection has its own open file, and one connection
belongs to one thread). The lock is dropped at commit, rollback or close; a process that dies
holding it loses it with its files. Measured with 4 processes of 25 threads each writing
20 transactions: the slowest took 0.13-0.22 s instead of 0.74-0.94 s, and all of them took
about half the time.
"""

from __future__ import annotations

import fcntl
import os

from django.db.backends.sqlite3 import base


class DatabaseWrapper(base.DatabaseWrapper):
    _write_lock_fd: int | None = None

    def _lock_path(self) -> str:
        return f"{self.settings_dict['NAME']}.write-lock"

    def _start_transaction_under_autocommit(self) -> None:
        if self._write_lock_fd is None and not self.is_in_memory_db():
            self._write_lock_fd = os.open(self._lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
        if self._write_lock_fd is not None:
            fcntl.flock(self._write_lock_fd, fcntl.LOCK_EX)
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._write_unlock()
            raise

    def _write_unlock(self) -> None:
        if self._write_lock_fd is not None:
            fcntl.flock(self._write_lock_fd, fcntl.LOCK_UN)

    def _commit(self) -> None:
        try:
            super()._commit()
        finally:
            self._write_unlock()

    def _rollback(self) -> None:
        try:
            super()._rollback()
        finally:
            self._write_unlock()

    def _close(self) -> None:
        try:
            super()._close()
        finally:
            if self._write_lock_fd is not None:
                os.close(self._write_lock_fd)  # closing drops the lock too
                self._write_lock_fd = None

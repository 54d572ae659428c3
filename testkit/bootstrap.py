"""Loaded by pytest before Django (``-p testkit.bootstrap`` in pyproject).

With nothing set, the suite runs on SQLite and its own embedded Redis under
``var/test/``, apart from a running dev server. With ``DATABASE_URL`` and
``REDIS_URL`` set (as ``.ci/run`` does) it runs on the real services.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("ARENA_ENV", "test")
# No test reads a developer's .env (arena.env_file), nor do the commands tests start.
os.environ["ARENA_ENV_FILE"] = ""
# The leaderboard's run comes a second after a vote rather than 20 s: a test's database is
# emptied only once the worker has run what the test sent it (the root conftest), and a run
# held 20 s would hold up every voting test's end by as much. Tests of the delay set theirs.
os.environ.setdefault("ARENA_LEADERBOARD_DEBOUNCE_SECONDS", "1")
# Every test client and browser comes from 127.0.0.1: seed 004's hourly allowance (100 API
# requests per address) is spent by one API contract test alone. The tests of the allowance
# set theirs (accounts/tests/test_limits.py).
os.environ.setdefault("ARENA_ANON_REQUESTS_PER_HOUR", "0")
os.environ.setdefault("ARENA_PERSON_REQUESTS_PER_HOUR", "0")
# Each run gets its own folder (SQLite file, Redis socket), so two runs on one
# machine, or a run beside the dev server, never share state.
_private_var = None
if not os.environ.get("ARENA_VAR_DIR"):
    _private_var = tempfile.mkdtemp(prefix="arena-test-")
    os.environ["ARENA_VAR_DIR"] = _private_var
# The processes tests start (daphne) answer /metrics to this token (arena/tests/test_metrics.py).
os.environ["ARENA_METRICS_TOKEN"] = "metrics-token-for-tests"


def _own_worker_services(worker: str) -> None:
    """A pytest-xdist worker (``gw0``, ``gw1``, …) gets a folder (SQLite, embedded Redis)
    of its own under the run's, and on a real Redis a database of its own: the database of
    ``REDIS_URL`` for ``gw0``, the one below it for ``gw1``, and so on (cache, rate limits,
    channel layer, broker and results never meet another worker's). pytest-django gives
    each worker its own test database."""
    global _private_var
    index = int(worker.removeprefix("gw"))
    folder = Path(os.environ["ARENA_VAR_DIR"]) / worker
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["ARENA_VAR_DIR"] = str(folder)
    _private_var = None  # the controller's folder holds it, and removes it
    url = os.environ.get("REDIS_URL")
    if url and index:
        head, _, tail = url.rstrip("/").rpartition("/")
        base = int(tail) if tail.isdigit() else 0
        os.environ["REDIS_URL"] = f"{head if tail.isdigit() else url.rstrip('/')}/" \
                                  f"{(base - index) % 16}"


if os.environ.get("PYTEST_XDIST_WORKER"):
    _own_worker_services(os.environ["PYTEST_XDIST_WORKER"])

_embedded = None
_owner_pid = os.getpid()


def pytest_configure(config):
    global _embedded
    from django.conf import settings

    if settings.EMBEDDED_REDIS:
        from arena.embedded_redis import start_embedded_redis

        _embedded = start_embedded_redis(Path(settings.EMBEDDED_REDIS_SOCKET))


_exit_status: int | None = None


def pytest_sessionfinish(session, exitstatus):
    global _exit_status
    _exit_status = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    from django.conf import settings

    if _embedded is not None:
        from arena.embedded_redis import stop_embedded_redis

        stop_embedded_redis(_embedded, Path(settings.EMBEDDED_REDIS_SOCKET))
    if _private_var and os.getpid() == _owner_pid:
        shutil.rmtree(_private_var, ignore_errors=True)
    _exit_without_native_teardown()


def _exit_without_native_teardown() -> None:
    """End the run with pytest's status before the interpreter finalizes.

    The ``livekit`` wheel runs a native (tokio) runtime; while Python tears itself down, one
    of its threads can call back into it and abort the process (SIGABRT, status 134) after
    every test has passed and been reported. Its runtime is shut down here while Python is
    whole, and the run ends at once with the status pytest decided."""
    if _exit_status is None or os.getpid() != _owner_pid:
        return
    ffi = sys.modules.get("livekit.rtc._ffi_client")
    if ffi is not None and ffi.FfiClient._instance is not None:
        ffi.FfiClient._instance._dispose()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_exit_status)

"""Loaded by pytest before Django (``-p arena.testing.bootstrap`` in pyproject).

With nothing set, the suite runs on SQLite and its own embedded Redis under
``var/test/``, apart from a running dev server. With ``DATABASE_URL`` and
``REDIS_URL`` set (as ``.ci/run`` does) it runs on the real services.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("ARENA_ENV", "test")
# Each run gets its own folder (SQLite file, Redis socket), so two runs on one
# machine, or a run beside the dev server, never share state.
_private_var = None
if not os.environ.get("ARENA_VAR_DIR"):
    _private_var = tempfile.mkdtemp(prefix="arena-test-")
    os.environ["ARENA_VAR_DIR"] = _private_var

_embedded = None
_owner_pid = os.getpid()


def pytest_configure(config):
    global _embedded
    from django.conf import settings

    if settings.EMBEDDED_REDIS:
        from arena.embedded_redis import start_embedded_redis

        _embedded = start_embedded_redis(Path(settings.EMBEDDED_REDIS_SOCKET))


def pytest_unconfigure(config):
    from django.conf import settings

    if _embedded is not None:
        from arena.embedded_redis import stop_embedded_redis

        stop_embedded_redis(_embedded, Path(settings.EMBEDDED_REDIS_SOCKET))
    if _private_var and os.getpid() == _owner_pid:
        shutil.rmtree(_private_var, ignore_errors=True)

"""Loaded by pytest before Django (``-p arena.testing.bootstrap`` in pyproject).

With nothing set, the suite runs on SQLite and its own embedded Redis under
``var/test/``, apart from a running dev server. With ``DATABASE_URL`` and
``REDIS_URL`` set (as ``.ci/run`` does) it runs on the real services.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("ARENA_ENV", "test")
if not os.environ.get("REDIS_URL"):
    os.environ.setdefault("ARENA_VAR_DIR", str(ROOT / "var" / "test"))

_embedded = None


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

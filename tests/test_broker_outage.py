"""Redis, the broker, channel layer and rate-limit store of a whole arena (daphne, a Celery
worker and beat, each its own process), stopped and started again: while it is down a new
battle is refused with nothing saved, since its limits cannot be counted, and the answer says
"temporarily unavailable" (503 with Retry-After, never the 500 page) while pages that only
read keep working; once it is back, a new battle is answered."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from django.conf import settings

from arena.embedded_redis import start_embedded_redis, stop_embedded_redis
from battles.models import Battle
from testkit.live import daphne_server, keyless, start_worker_process, stop_process

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def arena_on_private_redis(tmp_path, test_process_env, two_models, fake_openai):
    socket = tmp_path / "redis.sock"
    redis = {"process": start_embedded_redis(socket)}
    keyless(fake_openai, two_models)
    env = {**test_process_env, "REDIS_URL": f"unix://{socket}", "CELERY_QUEUE": "outage",
           "CACHE_PREFIX": "outage", "ARENA_STEP_SWEEP_SECONDS": "0.5",
           "ARENA_API_WAIT_SECONDS": "30"}
    worker = start_worker_process(env, queue="outage")
    beat = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "arena", "beat", "--loglevel", "WARNING",
         "--schedule", str(tmp_path / "beat-schedule")],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with daphne_server(env) as base_url:
            yield base_url, socket, redis
    finally:
        for process in (beat, worker):
            stop_process(process, grace=15)
        stop_embedded_redis(redis["process"], socket)


def test_redis_down_a_battle_is_refused_with_nothing_saved_and_once_back_it_is_answered(
        arena_on_private_redis):
    base_url, socket, redis = arena_on_private_redis
    # A script writes as the site's own pages do: with the site as its Origin.
    with httpx.Client(base_url=base_url, timeout=60, headers={"Origin": base_url}) as client:
        before = client.post("/api/battles", json={"prompt": "Before the outage."})
        assert before.status_code == 200, before.text

        stop_embedded_redis(redis["process"], socket)
        redis["process"] = None
        # Its limits cannot be counted: refused, not let through uncounted.
        during = client.post("/api/battles", json={"prompt": "During the outage."})
        assert during.status_code == 503 and during.headers["Retry-After"] == "10"
        assert "temporarily unavailable" in during.json()["detail"]
        assert "nothing was changed" in during.json()["detail"]
        assert not Battle.objects.filter(turns__prompt="During the outage.").exists()
        assert client.get("/battle/").status_code == 200  # pages that only read still work

        redis["process"] = start_embedded_redis(socket)
        saved = Battle.objects.get(turns__prompt="Before the outage.")
        assert client.get(f"/api/battles/{saved.id}").status_code == 200  # its owner sees it
        after = client.post("/api/battles", json={"prompt": "After the outage."})
        assert after.status_code == 200, after.text

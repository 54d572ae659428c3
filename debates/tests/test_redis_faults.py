"""Redis paused during one speech and killed during the next, in a debate run through the API
on daphne and a Celery worker of the test's own (each its own process, on a redis-server the
test controls): the worker lives through both, the debate completes, and its transcript has
each speech once and whole, each step run once."""

from __future__ import annotations

import threading

import httpx
import pytest

from arena.steps import StepStatus
from debates.models import Debate, DebateStatus, DebateStep, StepKind
from debates.tests.debate_support import DebateScript, library, make_model, speech_of
from testkit.live import keyless
from testkit.redis_faults import arena_on
from testkit.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _speaking(debate_id, position: str) -> bool:
    return DebateStep.objects.filter(debate_id=debate_id, kind=StepKind.TURN,
                                     position=position, status=StepStatus.RUNNING).exists()


def test_redis_paused_then_killed_mid_speech_the_debate_completes_with_each_speech_once(
        private_redis, test_process_env, fake_openai):
    fake_openai.reply_text = DebateScript()
    models = [make_model(fake_openai, slug) for slug in ("alpha-7b", "beta-3b", "gamma-1b")]
    keyless(fake_openai, models, token_delay=0.2)  # a speech takes about 5 s
    topic, first, second = library()
    env = {**test_process_env, "ARENA_DEBATE_JUDGE_MODEL": "gamma-1b"}
    with arena_on(private_redis, env, queue="debate-faults") as (base, worker), \
            httpx.Client(base_url=base, timeout=30, headers={"Origin": base}) as client:
        run = client.post("/api/debate/run", json={
            "model_a": "alpha-7b", "model_b": "beta-3b", "topic_id": str(topic.pk),
            "persona_a": str(first.pk), "persona_b": str(second.pk), "rounds": 1,
            "word_limit": 60, "fact_checking": False})
        assert run.status_code == 200, run.text
        debate_id = run.json()["debate_id"]

        wait_for(lambda: _speaking(debate_id, "pro"), what="the pro speech")
        with private_redis.paused():  # a stall: the worker gives up on it and goes on
            threading.Event().wait(3)
        wait_for(lambda: _speaking(debate_id, "con"), what="the con speech")
        private_redis.kill()  # the worker's connections reset, the data gone
        private_redis.start()

        wait_for(lambda: Debate.objects.filter(pk=debate_id, status__in=(
            DebateStatus.COMPLETED, DebateStatus.FAILED)).exists(), timeout=60,
            what="the debate to finish")
        debate = client.get(f"/api/debates/{debate_id}").json()
        assert worker.poll() is None, worker.stderr.read().decode()[-3000:]

    assert debate["status"] == "completed", debate["error"]
    assert [(t["round"], t["position"], t["speech"]) for t in debate["transcript"]] == [
        (1, position, speech_of("", position, "1").split("<speech>")[1].removesuffix(
            "</speech>")) for position in ("pro", "con")]
    assert debate["ai_winner"] == "pro"
    steps = DebateStep.objects.filter(debate_id=debate_id)
    assert not steps.exclude(status=StepStatus.DONE).exists()
    assert not steps.filter(restarts__gt=0).exists()  # nothing taken over: the worker lived
    assert steps.filter(kind=StepKind.TURN).count() == 2

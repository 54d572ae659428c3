"""A real worker process killed while it judges a voice battle's calls: each judge stage is
run again once, by another worker, and the metrics complete with nothing doubled."""

from __future__ import annotations

import threading

import pytest

from agents import services
from agents.models import EvaluationStage, Scenario, StageKind
from agents.tests.voice_support import (
    JUDGE_MARK,
    VoiceScript,
    judge_json,
    local_agents,
    make_battle,
    record_call,
)
from arena.steps import StepStatus, step_requeue_stale
from testkit.live import doomed_worker, sweep_until, worker_idle
from testkit.ratings import quiet_rating_runs
from testkit.visitors import visitor_session_key
from testkit.waiting import wait_for


class HeldJudge(VoiceScript):
    """The voice script, whose first judge call of each conversation hangs until released."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.judged: list[str] = []

    def __call__(self, rec) -> str:  # noqa: ANN001 - a recorded request
        text = "\n".join(m["content"] for m in rec.messages)
        if JUDGE_MARK in text:
            self.judged.append(text)
            if len(self.judged) <= 2:
                self.release.wait(60)  # the doomed worker's call hangs until it is dead
            return judge_json(True)
        return super().__call__(rec)


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_evaluation_loses_nothing(
        celery_worker, fake_openai, short_leases, test_process_env, voice_media, monkeypatch):
    quiet_rating_runs(monkeypatch)
    script = HeldJudge()
    fake_openai.reply_text = script
    fake_openai.api_key = None
    configs = local_agents(fake_openai)
    Scenario.objects.exclude(slug="haircut-appointment").update(active=False)
    key = visitor_session_key()
    battle = make_battle(key, configs)
    env = {**test_process_env, "ARENA_VOICE_MEDIA_DIR": str(voice_media)}
    try:
        with doomed_worker(env, monkeypatch) as kill:
            record_call(battle, "a")
            record_call(battle, "b")
            services.agent_battle_vote(battle_id=battle.pk, session_key=key, overall="a")
            # The doomed worker measures and transcribes both calls, then asks the judge.
            wait_for(lambda: len(script.judged) == 2 and EvaluationStage.objects.filter(
                kind=StageKind.JUDGE, status=StepStatus.RUNNING).count() == 2,
                timeout=120, what="the doomed worker to be judging both calls")
            kill()
    finally:
        script.release.set()
    # The sweep runs on, as beat runs it: a taken-over stage whose second-long lease
    # (short_leases) lapses under a stall is started over once more, and its generation guard
    # still saves one result.
    restarted = sweep_until(lambda _: not EvaluationStage.objects.filter(
        kind=StageKind.JUDGE).exclude(status__in=(StepStatus.DONE, StepStatus.FAILED)).exists(),
        timeout=60, what="the judge stages to finish")
    assert list(EvaluationStage.objects.filter(kind=StageKind.JUDGE).values_list(
        "status", "error")) == [(StepStatus.DONE, "")] * 2
    wait_for(worker_idle)
    # Both killed stages were started over (at least: see the sweep above).
    assert restarted >= 2 and step_requeue_stale() == 0
    for stage in EvaluationStage.objects.filter(kind=StageKind.JUDGE):
        assert stage.generation == stage.restarts >= 1
    assert EvaluationStage.objects.count() == 6  # latency, transcript, judge for each call
    assert len(script.judged) >= 4  # two killed mid-call, then each judged (again)

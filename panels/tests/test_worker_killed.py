"""A real worker process killed while it judges a panel: each judgement is written again
once, by another worker, and the panel reaches its verdict with nothing lost or doubled."""

from __future__ import annotations

import os
import threading

import pytest

from arena.steps import StepStatus, step_requeue_stale
from panels import services
from panels.models import PanelJudgement, PanelStatus
from panels.tests.panel_support import PanelScript, panel_setup, ranking_reply, wait_finished
from testkit.live import doomed_worker, steps_started_over
from testkit.waiting import wait_for


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_judgement_loses_nothing(
        celery_worker, fake_openai, fake_anthropic, settings, short_leases, test_process_env,
        monkeypatch):
    release = threading.Event()
    first_call: set[str] = set()
    script = PanelScript()

    def held_the_first_time(marker: str):
        def reply(labels: dict[str, str]) -> str:
            if marker not in first_call:
                first_call.add(marker)
                release.wait(60)  # the doomed worker's call hangs until it is dead
            return ranking_reply(labels, script.preference)
        return reply

    script.judge_replies = {m: [held_the_first_time(m)] for m in ("alpha", "beta", "gamma")}
    panel_setup(fake_openai, fake_anthropic, settings, monkeypatch, script)
    env = {**test_process_env, fake_openai.api_key_env: os.environ[fake_openai.api_key_env],
           fake_anthropic.api_key_env: os.environ[fake_anthropic.api_key_env]}
    try:
        with doomed_worker(env, monkeypatch) as kill:
            panel = services.panel_create(question="What is 2+2?")
            # The doomed worker answers, then asks every judge; each judge's call hangs.
            wait_for(lambda: len(script.judge_prompts) == 3
                     and PanelJudgement.objects.filter(panel=panel,
                                                       status=StepStatus.RUNNING).count() == 3,
                     what="the doomed worker to be judging")
            kill()
    finally:
        release.set()
    restarted = steps_started_over(3)
    panel = wait_finished(panel.id, timeout=60)
    assert restarted == 3 and step_requeue_stale() == 0
    assert panel.status == PanelStatus.DONE
    judgements = list(PanelJudgement.objects.filter(panel=panel))
    assert len(judgements) == 3
    for judgement in judgements:
        assert judgement.status == StepStatus.DONE and judgement.is_valid
        assert (judgement.generation, judgement.restarts) == (1, 1)
    assert len(script.judge_prompts) == 6  # three killed mid-call, three written once

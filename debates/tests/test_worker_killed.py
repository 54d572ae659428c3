"""A debate whose worker dies mid-step resumes from its last committed step, and writes no
turn twice. Leases are shortened by settings; waits poll for a state (never a fixed sleep)."""

from __future__ import annotations

import os

import pytest

from arena.steps import StepStatus, step_requeue_stale
from debates import services
from debates.models import Debate, DebateStatus, DebateStep, StepKind
from debates.tests.debate_support import (
    DebateScript,
    library,
    make_model,
    quiet_rating_runs,
    wait_debate,
    wait_for,
)
from testkit.live import doomed_worker, steps_started_over


@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_mid_turn_resumes_without_duplicating_turns(
        celery_worker, fake_openai, settings, short_leases, test_process_env, monkeypatch):
    quiet_rating_runs(monkeypatch)
    fake_openai.reply_text = DebateScript()
    fake_openai.token_delay = 0.3  # a speech takes seconds: long enough to kill mid-stream
    for slug in ("alpha-7b", "beta-3b", "gamma-1b"):
        make_model(fake_openai, slug)
    settings.ARENA_DEBATE_JUDGE_MODEL = "gamma-1b"
    topic, first, second = library()
    # The doomed worker takes the debate's queue and sends the next steps there too.
    env = {**test_process_env, "ARENA_DEBATE_JUDGE_MODEL": "gamma-1b",
           fake_openai.api_key_env: os.environ[fake_openai.api_key_env]}
    with doomed_worker(env, monkeypatch) as kill:
        debate = services.debate_create(
            session_key="owner", model_a="alpha-7b", model_b="beta-3b",
            topic_id=str(topic.pk), persona_a=str(first.pk), persona_b=str(second.pk),
            rounds=1, word_limit=60, fact_checking=False)
        wait_for(lambda: DebateStep.objects.filter(debate=debate, kind=StepKind.TURN,
                                                   status=StepStatus.RUNNING).exists()
                 and fake_openai.chat_requests, what="the doomed worker to be mid-speech")
        kill()
    fake_openai.token_delay = 0
    restarted = steps_started_over(1)
    debate = wait_debate(debate.pk)
    assert debate.status == DebateStatus.COMPLETED, debate.error
    assert restarted == 1 and step_requeue_stale() == 0
    assert [(t.round, t.position) for t in debate.turns.order_by("created_at")] == [
        (1, "pro"), (1, "con")]
    killed = debate.steps.get(restarts=1)
    assert killed.kind == StepKind.TURN and killed.generation == 1
    assert killed.status == StepStatus.DONE
    assert debate.steps.filter(kind=StepKind.TURN).count() == 2  # no step created twice
    speech = debate.turns.get(position=killed.position).speech
    assert speech.startswith(f"Speaker-{killed.position}-1 argues.")
    assert speech.endswith("That settles it.")  # the whole speech, written once
    assert Debate.objects.get(pk=debate.pk).ai_winner == "pro"

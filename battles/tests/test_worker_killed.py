"""A real worker process killed while it streams both answers of a battle: each answer is
started over once, by another worker, and written once, whole."""

from __future__ import annotations

import os

import pytest

from arena.steps import StepStatus, step_requeue_stale
from battles import services
from battles.tests.conftest import neutral_reply
from testkit.live import doomed_worker, steps_started_over
from testkit.waiting import wait_for

OWNER = "session-of-owner"


@pytest.mark.django_db(transaction=True)
def test_a_killed_workers_answer_is_requeued_once_and_finishes_once(
        celery_worker, two_models, fake_openai, short_leases, test_process_env, monkeypatch):
    fake_openai.token_delay = 0.3  # long enough to kill the worker mid-stream
    env = {**test_process_env, fake_openai.api_key_env: os.environ[fake_openai.api_key_env]}
    with doomed_worker(env, monkeypatch) as kill:
        battle, turn = services.battle_create(session_key=OWNER, prompt="Count slowly.")
        wait_for(lambda: len(fake_openai.chat_requests) >= 2
                 and all(r.status == StepStatus.RUNNING for r in turn.responses.all()),
                 what="the doomed worker to be streaming both answers")
        kill()

    # The heartbeats stopped with the worker: once the leases run out, the sweep starts both
    # answers over, exactly once, and the test's own worker writes them.
    restarted = steps_started_over(2)
    wait_for(lambda: all(r.is_finished for r in turn.responses.all()), what="the answers")
    assert restarted == 2
    assert step_requeue_stale() == 0
    for response in turn.responses.all():
        assert response.status == StepStatus.DONE
        assert (response.generation, response.restarts) == (1, 1)
        model = battle.model_in(response.slot)
        rec = next(r for r in fake_openai.chat_requests if r.model == model.api_model)
        assert response.text == neutral_reply(rec)  # the whole answer, written once
    assert len(fake_openai.chat_requests) == 4  # two killed mid-stream, two complete

"""Battle answers as platform steps: claims, leases, heartbeats, the sweep, a killed worker.

Leases and heartbeats are shortened by settings so these run in seconds. Waits poll the
database for a state with a deadline (synchronisation by condition, never by a fixed sleep).
"""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

import arena.steps
from arena.steps import RESTARTED_NOTICE, StepStatus, step_claim, step_requeue_stale
from arena.testing.live import doomed_worker, steps_started_over
from arena.testing.waiting import wait_for
from battles import services
from battles.models import Response, Slot
from battles.steps import response_generate
from battles.tests.conftest import neutral_reply

OWNER = "session-of-owner"


@pytest.fixture
def sent(monkeypatch):
    """Task sends recorded instead of going to the broker."""
    calls = []
    monkeypatch.setattr(arena.steps, "send_task", lambda name, args: calls.append((name, args)))
    return calls


@pytest.mark.django_db
class TestClaimAndSweep:
    def test_a_claim_sets_the_status_and_a_fresh_lease_together(self, two_models):
        battle, turn = services.battle_create(session_key=OWNER, prompt="Hello?")
        response = turn.responses.get(slot=Slot.A)
        before = timezone.now()
        assert step_claim(Response, response.pk, 0)
        response.refresh_from_db()
        assert response.status == StepStatus.RUNNING
        assert response.lease_expires_at > before and response.updated_at >= before
        assert not step_claim(Response, response.pk, 0)  # taken: a duplicate job does nothing

    def test_an_answer_that_waited_in_the_queue_longer_than_a_lease_is_not_thrown_away(
            self, two_models, sent, settings, django_capture_on_commit_callbacks):
        battle, turn = services.battle_create(session_key=OWNER, prompt="Hello?")
        waited = timezone.now() - timedelta(seconds=settings.ARENA_STEP_RESEND_SECONDS + 60)
        Response.objects.filter(turn=turn).update(updated_at=waited)

        with django_capture_on_commit_callbacks(execute=True):
            assert step_requeue_stale() == 0  # nothing started over
        response = turn.responses.get(slot=Slot.A)
        assert response.generation == 0 and response.status == StepStatus.PENDING
        # ...but the tasks were sent again, with the same generation: whichever runs first
        # answers, the other finds the answer taken.
        assert sorted(args for _, args in sent) == sorted(
            [str(r.pk), 0] for r in turn.responses.all())

        response_generate(response_id=str(response.pk), generation=0)  # the queued job runs
        response.refresh_from_db()
        assert response.status == StepStatus.DONE and "Hello?" in response.text

    def test_a_running_answer_whose_lease_ran_out_starts_over_and_the_page_says_so(
            self, two_models, sent, django_capture_on_commit_callbacks):
        client = Client()
        client.get("/battle/")
        session = client.session
        session["visitor"] = True
        session.save()
        client.cookies["sessionid"] = session.session_key
        battle, turn = services.battle_create(session_key=session.session_key, prompt="Hi")
        response = turn.responses.get(slot=Slot.A)
        assert step_claim(Response, response.pk, 0)
        Response.objects.filter(pk=response.pk).update(
            lease_expires_at=timezone.now() - timedelta(seconds=1))

        with django_capture_on_commit_callbacks(execute=True):
            assert step_requeue_stale() == 1
        response.refresh_from_db()
        assert (response.generation, response.restarts, response.status) == (
            1, 1, StepStatus.PENDING)
        assert ("battles.tasks.generate_response", [str(response.pk), 1]) in sent
        side = client.get(f"/battle/{battle.id}/responses/{response.id}").content.decode()
        assert RESTARTED_NOTICE in side
        response_generate(response_id=str(response.pk), generation=0)  # the old job wakes
        response.refresh_from_db()
        assert response.status == StepStatus.PENDING and response.text == ""
        assert step_requeue_stale() == 0


@pytest.mark.django_db(transaction=True)
def test_a_live_stream_that_outlasts_several_leases_is_never_requeued(
        celery_worker, two_models, fake_openai, short_leases):
    fake_openai.token_delay = 0.3  # 14 tokens: over four seconds, four leases long
    battle, turn = services.battle_create(session_key=OWNER, prompt="Take your time.")
    requeued = 0

    def finished():
        nonlocal requeued
        requeued += step_requeue_stale()
        return all(r.is_finished for r in turn.responses.all())

    wait_for(finished, what="both answers")
    for response in turn.responses.all():
        assert response.status == StepStatus.DONE
        assert (response.generation, response.restarts) == (0, 0)
        assert response.latency_ms > 3 * 1000 * short_leases.ARENA_STEP_LEASE_SECONDS
    assert requeued == 0
    assert len(fake_openai.chat_requests) == 2


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

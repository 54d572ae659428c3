"""Battle answers as platform steps: what the page shows of an answer started over, and the
heartbeats of a stream longer than its lease (the life of a step in general:
``tests/test_step_lifecycle.py``; a killed worker: ``test_worker_killed.py``).

Leases and heartbeats are shortened by settings so these run in seconds. Waits poll the
database for a state with a deadline (synchronisation by condition, never by a fixed sleep).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from arena.steps import RESTARTED_NOTICE, StepStatus, step_claim, step_requeue_stale
from battles import services
from battles.models import Response, Slot
from battles.steps import response_run
from testkit.waiting import wait_for

OWNER = "session-of-owner"


@pytest.mark.django_db
def test_a_running_answer_whose_lease_ran_out_starts_over_and_the_page_says_so(
        two_models, step_sends, django_capture_on_commit_callbacks):
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
    assert [str(response.pk), 1] in step_sends.of("run_response")
    side = client.get(f"/battle/{battle.id}/responses/{response.id}").content.decode()
    assert RESTARTED_NOTICE in side
    response_run(response_id=str(response.pk), generation=0)  # the old job wakes
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

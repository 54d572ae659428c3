"""A worker dying mid-panel loses nothing: steps run here one by one, tasks are recorded."""

from datetime import timedelta

import pytest
from django.utils import timezone

import arena.steps
from arena.steps import StepStatus, step_requeue_stale
from panels import recovery, services, steps
from panels.models import PanelAnswer, PanelStatus
from panels.tests.panel_support import panel_setup

QUESTION = "What is 2+2?"


class WorkerLost(BaseException):
    """Stands in for the process dying: nothing after it runs."""


@pytest.fixture
def recorded(transactional_db, monkeypatch, fake_openai, fake_anthropic, settings):
    """Task sends (after commit) recorded as (task name, args) instead of going to the broker."""
    panel_setup(fake_openai, fake_anthropic, settings, monkeypatch)
    calls = []

    def record(name, args):
        calls.append((name.rsplit(".", 1)[-1], tuple(args)))

    monkeypatch.setattr(arena.steps, "send_task", record)
    return calls


def sent(calls, name):
    return [args for task, args in calls if task == name]


def test_a_redelivered_answer_task_advances_without_asking_again(recorded, monkeypatch,
                                                                 fake_openai, fake_anthropic):
    panel = services.panel_create(question=QUESTION)
    first, second, third = sent(recorded, "panel_answer")
    for answer_id, generation in (first, second):
        steps.panel_answer_generate(answer_id=answer_id, generation=generation)

    def die(**kwargs):
        raise WorkerLost

    with monkeypatch.context() as patched, pytest.raises(WorkerLost):
        patched.setattr(services, "panel_advance", die)
        steps.panel_answer_generate(answer_id=third[0], generation=third[1])
    assert PanelAnswer.objects.get(pk=third[0]).status == StepStatus.DONE  # saved before dying
    panel.refresh_from_db()
    assert panel.status == PanelStatus.ANSWERING

    asked = len(fake_openai.chat_requests) + len(fake_anthropic.chat_requests)
    steps.panel_answer_generate(answer_id=third[0], generation=third[1])  # the redelivery
    assert len(fake_openai.chat_requests) + len(fake_anthropic.chat_requests) == asked
    panel.refresh_from_db()
    assert panel.status == PanelStatus.JUDGING
    assert len(sent(recorded, "panel_judge")) == 3


def test_a_stuck_step_is_restarted_and_the_old_job_cannot_overwrite(recorded):
    panel = services.panel_create(question=QUESTION)
    answers = sent(recorded, "panel_answer")
    for answer_id, generation in answers[1:]:
        steps.panel_answer_generate(answer_id=answer_id, generation=generation)
    stuck_id, old_generation = answers[0]
    long_ago = timezone.now() - timedelta(hours=1)
    PanelAnswer.objects.filter(pk=stuck_id).update(status=StepStatus.RUNNING,
                                                   lease_expires_at=long_ago)

    assert step_requeue_stale() == 1
    restarted = sent(recorded, "panel_answer")[-1]
    assert restarted == (stuck_id, old_generation + 1)
    steps.panel_answer_generate(answer_id=stuck_id, generation=old_generation)  # the slow one
    assert PanelAnswer.objects.get(pk=stuck_id).status == StepStatus.PENDING
    steps.panel_answer_generate(answer_id=stuck_id, generation=restarted[1])
    assert PanelAnswer.objects.get(pk=stuck_id).status == StepStatus.DONE
    panel.refresh_from_db()
    assert panel.status == PanelStatus.JUDGING

    for judgement_id, generation in sent(recorded, "panel_judge"):
        steps.panel_judgement_run(judgement_id=judgement_id, generation=generation)
    panel.refresh_from_db()
    assert panel.status == PanelStatus.DONE and panel.verdict["judges_counted"] == 3
    assert step_requeue_stale() == 0
    assert recovery.panel_resume_stale(older_than_seconds=60) == 0


def test_each_judge_gets_its_own_order(recorded):
    services.panel_create(question=QUESTION)
    for answer_id, generation in sent(recorded, "panel_answer"):
        steps.panel_answer_generate(answer_id=answer_id, generation=generation)
    from panels.models import PanelJudgement

    orders = [tuple(j.shown_order) for j in PanelJudgement.objects.all()]
    assert len(orders) == 3 and all(sorted(o) == ["alpha-7b", "beta-3b", "gamma-1b"]
                                    for o in orders)


def test_the_page_says_when_a_step_is_written_again(recorded, client):
    from arena.steps import RESTARTED_NOTICE

    panel = services.panel_create(question=QUESTION)
    stuck_id, _ = sent(recorded, "panel_answer")[0]
    PanelAnswer.objects.filter(pk=stuck_id).update(
        status=StepStatus.RUNNING, lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert step_requeue_stale() == 1
    progress = client.get(f"/panel/{panel.id}/progress").content.decode()
    assert RESTARTED_NOTICE in progress

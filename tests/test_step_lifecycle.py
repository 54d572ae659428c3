"""The life of a step, the same for every step model of every mode (:mod:`arena.steps`).

Each registered step model (:func:`arena.steps.step_models`) is driven through its mode's own
step function, with its work replaced by a script (no worker, no provider); what a mode's
contest looks like around its step is described by its ``tests/step_cases.py``.
"""

from __future__ import annotations

from datetime import timedelta
from importlib import import_module

import pytest
from django.utils import timezone
from django.utils.module_loading import import_string

import arena.settings as configured  # as the settings module computed them (no test's)
from arena.broker import broker_redis, queue_mark_key
from arena.steps import (
    UNEXPECTED_FAILURE,
    StepResult,
    StepStatus,
    step_claim,
    step_models,
    step_requeue_stale,
    step_save,
)
from testkit.steps import StepCase

pytestmark = pytest.mark.django_db


def case_of(model) -> StepCase:  # noqa: ANN001 - a step model
    """The mode's description of ``model`` (every step model must have one)."""
    cases = import_module(f"{model._meta.app_config.name}.tests.step_cases").CASES
    assert model in cases, f"{model._meta.label} has no StepCase in its tests/step_cases.py"
    return cases[model]


class Driven:
    """A step row of one model, its mode's case, and a record of what the runner called."""

    def __init__(self, *, row, case: StepCase, calls: list[str], sends, committed) -> None:  # noqa: ANN001
        self.row, self.case, self.calls, self.sends = row, case, calls, sends
        self.model, self.pk = type(row), str(row.pk)
        self.committed = committed

    def run(self, generation: int) -> None:
        """The step's job of ``generation`` runs (and its after-commit work)."""
        with self.committed(execute=True):
            self.case.run(self.pk, generation)

    def fresh(self):  # noqa: ANN201 - a row of the step model
        return self.model.objects.get(pk=self.pk)


@pytest.fixture(params=step_models(), ids=lambda model: model._meta.label)
def step(request, step_sends, monkeypatch, django_capture_on_commit_callbacks) -> Driven:
    """A waiting step of each model; its work succeeds with nothing to save unless a test
    replaces it."""
    case = case_of(request.param)
    calls: list[str] = []

    def recorded(name: str, function):  # noqa: ANN001, ANN202
        def call(*args):  # noqa: ANN002, ANN202
            calls.append(name)
            return function(*args)
        return call

    monkeypatch.setattr(case.work, "load", recorded("load", case.work.load))
    monkeypatch.setattr(case.work, "work", recorded("work", lambda job: StepResult()))
    monkeypatch.setattr(case.work, "advance", recorded("advance", case.work.advance))
    return Driven(row=case.make(), case=case, calls=calls, sends=step_sends,
                  committed=django_capture_on_commit_callbacks)


def test_a_step_is_claimed_once_and_a_taken_step_is_not_worked(step):
    assert step_claim(step.model, step.pk, 0)
    assert not step_claim(step.model, step.pk, 0)
    claimed = step.fresh()
    assert claimed.status == StepStatus.RUNNING and claimed.lease_expires_at > timezone.now()

    step.run(0)  # a second copy of the job (the sweep resent it): the step is taken
    assert step.calls == []  # nothing loaded before the claim, nothing worked
    assert step.fresh().status == StepStatus.RUNNING


def test_a_stale_generation_can_neither_claim_nor_save(step):
    step.model.objects.filter(pk=step.pk).update(generation=1)
    assert not step_claim(step.model, step.pk, 0)
    step.run(0)
    assert step.calls == [] and step.fresh().status == StepStatus.PENDING
    assert step_claim(step.model, step.pk, 1)
    assert not step_save(step.model, step.pk, 0, status=StepStatus.DONE)
    assert step.fresh().status == StepStatus.RUNNING
    assert step_save(step.model, step.pk, 1, status=StepStatus.DONE)


def test_a_job_that_finds_its_step_started_over_writes_nothing(step, monkeypatch):
    def started_over(job):  # noqa: ANN001, ANN202 - the sweep restarts it meanwhile
        step.model.objects.filter(pk=step.pk).update(generation=1, status=StepStatus.PENDING)
        return StepResult(error="too late")

    monkeypatch.setattr(step.case.work, "work", started_over)
    step.run(0)
    row = step.fresh()
    assert (row.status, row.error, row.generation) == (StepStatus.PENDING, "", 1)
    assert "advance" not in step.calls


def test_a_finished_step_redelivered_only_makes_sure_what_follows_exists(step):
    step.run(0)
    assert step.calls == ["load", "work", "advance"]
    done = step.fresh()
    assert done.status == StepStatus.DONE and done.lease_expires_at is None
    rows = {model: model.objects.count() for model in step_models()}
    sent = list(step.sends.calls)

    step.run(0)  # redelivered: its worker died after the commit
    assert step.calls == ["load", "work", "advance", "advance"]
    assert step.fresh().updated_at == done.updated_at
    assert {model: model.objects.count() for model in step_models()} == rows
    assert step.sends.calls == sent  # what follows was there already: nothing sent twice


def test_an_expired_lease_is_started_over_by_the_sweep_with_a_new_generation(step):
    assert step_claim(step.model, step.pk, 0)
    step.model.objects.filter(pk=step.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))

    with step.committed(execute=True):
        assert step_requeue_stale() == 1
    row = step.fresh()
    assert (row.status, row.generation, row.restarts) == (StepStatus.PENDING, 1, 1)
    assert row.notice  # the page says it is written again
    assert step.sends.calls == [(step.model.task_name, [step.pk, 1])]
    step.run(0)  # the old job, should it wake, can do nothing
    assert step.calls == [] and step.fresh().generation == 1
    step.run(1)
    assert step.fresh().status == StepStatus.DONE
    assert step_requeue_stale() == 0


def test_a_step_that_waited_long_in_the_queue_is_sent_again_never_thrown_away(step, settings):
    waited = timezone.now() - timedelta(seconds=settings.ARENA_STEP_RESEND_SECONDS + 60)
    step.model.objects.filter(pk=step.pk).update(updated_at=waited)

    with step.committed(execute=True):
        assert step_requeue_stale() == 0  # nothing started over...
    row = step.fresh()
    assert (row.status, row.generation) == (StepStatus.PENDING, 0)
    assert step.sends.calls == [(step.model.task_name, [step.pk, 0])]  # ...but sent again
    step.run(0)  # whichever copy runs first does the work;
    step.run(0)  # the other finds it done
    assert step.calls == ["load", "work", "advance", "advance"]


def test_after_redis_forgot_its_queue_every_waiting_step_is_sent_again_at_once(step):
    with step.committed(execute=True):
        step_requeue_stale()  # leaves the mark (a first look may send what waits)
    step.sends.calls.clear()
    with step.committed(execute=True):
        step_requeue_stale()
    assert step.sends.calls == []  # waiting briefly, in a queue that Redis still holds

    broker_redis().delete(queue_mark_key())  # Redis restarted empty: the queue is gone
    with step.committed(execute=True):
        assert step_requeue_stale() == 0  # nothing started over...
    assert step.sends.calls == [(step.model.task_name, [step.pk, 0])]  # ...but sent again
    step.sends.calls.clear()
    with step.committed(execute=True):
        step_requeue_stale()
    assert step.sends.calls == []  # once


def _raises(job):  # noqa: ANN001, ANN202 - a bug in the work
    raise ZeroDivisionError("a bug")


def _cannot_write(job):  # noqa: ANN001, ANN202 - a bug in writing what the work produced
    return StepResult(write=lambda: _raises(job))


@pytest.mark.parametrize("broken", [_raises, _cannot_write], ids=["in the work", "writing"])
def test_an_unexpected_error_fails_the_step_with_the_one_message_and_the_contest_goes_on(
        step, broken, monkeypatch, caplog):
    monkeypatch.setattr(step.case.work, "work", broken)
    step.run(0)
    failed = step.fresh()
    assert (failed.status, failed.error) == (StepStatus.FAILED, UNEXPECTED_FAILURE)
    assert "ZeroDivisionError: a bug" in caplog.text  # the traceback is logged
    step.case.moved_on(failed)


def test_every_step_task_is_a_step_task():
    """Late ack, redelivered when its worker is lost (what the rules above rely on)."""
    for model in step_models():
        task = import_string(model.task_name)
        assert task.acks_late and task.reject_on_worker_lost, model.task_name


def test_every_sweep_is_on_the_schedule_and_names_a_task_the_workers_know():
    from arena.celery import app

    # As celery beat starts: the tasks imported, then the app finalized, which adds the
    # modes' entries to the platform's (arena.celery).
    app.loader.import_default_modules()
    app.finalize()
    scheduled = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert {"debates.tasks.debate_stalled_sweep",
            "agents.tasks.conversation_stalled_sweep"} <= scheduled
    assert not [name for name in scheduled if name not in app.tasks]


def test_a_dead_workers_step_is_taken_over_within_15_seconds_as_configured_by_default():
    """A killed worker's step waited its one-minute lease before the sweep saw it (66 s of
    silence on the page): the default lease and sweep now start it over within 15 s, and a
    lease outlives three missed heartbeats, so a busy moment does not start over live work."""
    lease, beat = configured.ARENA_STEP_LEASE_SECONDS, configured.ARENA_STEP_HEARTBEAT_SECONDS
    assert lease + configured.ARENA_STEP_SWEEP_SECONDS <= 15
    assert lease >= 3 * beat

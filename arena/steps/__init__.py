"""Persisted steps: the one way every mode runs model work in the background.

A step is a row (a subclass of :class:`Step`, naming its Celery task in ``task_name``), a
thin task that calls the mode's step function, and one :func:`step_run` that every step
function calls with its mode's :class:`StepWork` (the work and the next-step rule)::

    @step_task
    def run_response(response_id: str, generation: int) -> None:
        from battles.steps import response_run
        response_run(response_id=response_id, generation=generation)

    # battles/steps.py
    RESPONSE = StepWork(Response, load=response_load, work=response_work,
                        advance=response_advance)

    def response_run(*, response_id: str, generation: int) -> None:
        step_run(RESPONSE, response_id, generation)

:mod:`arena.steps.runner` says what the runner does, in which order. Rules: the claim sets the
status and the lease in one statement; only a job of the current generation can claim or
save; :func:`step_requeue_stale` (beat, every ``ARENA_STEP_SWEEP_SECONDS``) starts over, with
a new generation, every running step whose lease expired (its worker died), never one that is
merely old; a step that waited in the queue is never thrown away. Services enqueue with
:func:`step_enqueue` (by task name), so they never import tasks.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from datetime import timedelta

from django.apps import apps
from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections, transaction
from django.db.models import F
from django.utils import timezone

from arena.steps.base import FINISHED, RESTARTED_NOTICE, Step, StepStatus, failed_for_good
from arena.steps.leases import step_heartbeat, step_lease
from arena.steps.runner import (
    DUE_HEADER,
    UNEXPECTED_FAILURE,
    StepResult,
    StepWork,
    release_database,
    step_claim,
    step_run,
    step_save,
)

logger = logging.getLogger(__name__)

__all__ = [
    "FINISHED",
    "RESTARTED_NOTICE",
    "UNEXPECTED_FAILURE",
    "Step",
    "StepResult",
    "StepStatus",
    "StepWork",
    "batch_soon",
    "batch_started",
    "enqueue_task",
    "failed_for_good",
    "release_database",
    "step_claim",
    "step_enqueue",
    "step_heartbeat",
    "step_lease",
    "step_models",
    "step_requeue_stale",
    "step_run",
    "step_save",
    "step_task",
]

TASK_OPTIONS = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}


def send_task(name: str, args: list, *, countdown: float | None = None) -> None:
    """Send a Celery task by name (services never import tasks). Nobody waits for a step's
    result, so the sender does not subscribe to it (Celery would open a result channel per
    sending thread)."""
    from arena.celery import app  # noqa: PLC0415 - Celery: processes that send, not setup

    # When the job is due, for the steps' queue-wait metric (arena.steps.runner).
    due = time.time() + (countdown or 0)
    app.send_task(name, args=args, countdown=countdown, ignore_result=True,
                  headers={DUE_HEADER: due})


def batch_soon(key: str, send: Callable[[], object], *, countdown: float,
               value: object = 1) -> bool:
    """Call ``send`` (it queues a run due in ``countdown`` s) unless a run is already due.

    For work that piles up many times a second and is cheaper done together: the first caller
    sets ``key`` in the cache (``SET NX``, to ``value``) and sends; later callers see the key
    and do nothing, so a burst yields one run. The run calls :func:`batch_started` before it
    reads its work, so whatever comes in meanwhile schedules the next run. The key expires,
    so a run the broker lost is sent again by a later caller. True if this call sent it.
    """
    if not cache.add(key, value, countdown + 600):
        return False
    try:
        send()
    except Exception:
        cache.delete(key)  # let the next caller try again
        raise
    return True


def batch_started(key: str) -> None:
    """A batch run of :func:`batch_soon` begins: later work schedules the next run."""
    cache.delete(key)


def enqueue_task(name: str, *args) -> None:
    """Send the Celery task ``name`` once the current transaction commits."""
    transaction.on_commit(lambda: send_task(name, list(args)))


def step_enqueue(step: Step) -> None:
    """Run the step's task (after commit) for its current generation.

    When the broker cannot take it (Redis down), the step stays saved and waiting, marked due
    for the sweep, which sends it as soon as the broker answers again: the request that
    made the step is not failed for it."""
    model, pk, generation = type(step), step.pk, step.generation

    def send() -> None:
        from kombu.exceptions import OperationalError  # noqa: PLC0415 - Celery's: see above

        try:
            send_task(model.task_name, [str(pk), generation])
        except OperationalError as exc:
            due = timezone.now() - timedelta(seconds=settings.ARENA_STEP_RESEND_SECONDS)
            model.objects.filter(pk=pk, generation=generation,
                                 status=StepStatus.PENDING).update(updated_at=due)
            logger.warning("%s %s could not be queued (%s); the sweep sends it once the broker "
                           "answers", model.__name__, pk, exc)

    transaction.on_commit(send)


def step_task(function: Callable) -> Callable:
    """A Celery task that runs one step: late ack, redelivered if its worker is lost, and a
    fresh database connection before and after (worker threads outlive requests)."""
    from celery import shared_task  # noqa: PLC0415 - tasks modules only: the models import this

    @functools.wraps(function)
    def run(*args, **kwargs):
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return shared_task(**TASK_OPTIONS)(run)


def step_models() -> list[type[Step]]:
    return [m for m in apps.get_models() if issubclass(m, Step) and m.task_name]


def step_requeue_stale() -> int:
    """Start over every running step whose lease expired; resend long-waiting ones.

    A running step with an expired lease lost its worker: its generation is bumped (the old
    job, should it wake, can no longer save), it waits again and its task is sent. A step
    still waiting after ``ARENA_STEP_RESEND_SECONDS`` is sent again *with the same
    generation*: whichever copy runs first claims it, the other does nothing, so a step that
    only waited in a long queue loses nothing; after a Redis that forgot its queue
    (:func:`arena.broker.queue_forgotten`) every waiting step is sent again at once. Returns
    how many steps were started over.
    """
    now = timezone.now()
    requeued = 0
    # A Redis that restarted empty forgot the task messages waiting in the queue: every
    # waiting step is sent again now rather than after ARENA_STEP_RESEND_SECONDS.
    from arena.broker import queue_forgotten  # noqa: PLC0415 - kombu: a worker's, not setup's

    forgotten = queue_forgotten()
    if forgotten:
        logger.info("the queue's Redis holds no mark: sending every waiting step again")
    for model in step_models():
        expired = model.objects.filter(status=StepStatus.RUNNING, lease_expires_at__lt=now)
        for pk in expired.values_list("pk", flat=True):
            with transaction.atomic():
                updated = model.objects.filter(
                    pk=pk, status=StepStatus.RUNNING, lease_expires_at__lt=now,
                ).update(generation=F("generation") + 1, restarts=F("restarts") + 1,
                         status=StepStatus.PENDING, lease_expires_at=None, updated_at=now)
                if not updated:
                    continue
                step = model.objects.get(pk=pk)
                # The page hears "started over" before the new job can stream.
                transaction.on_commit(step.on_requeued)
                step_enqueue(step)
            requeued += 1
        resend_before = (now if forgotten
                         else now - timedelta(seconds=settings.ARENA_STEP_RESEND_SECONDS))
        waiting = model.objects.filter(status=StepStatus.PENDING, updated_at__lt=resend_before)
        for pk, generation in waiting.values_list("pk", "generation"):
            with transaction.atomic():
                if model.objects.filter(pk=pk, status=StepStatus.PENDING,
                                        generation=generation).update(updated_at=now):
                    enqueue_task(model.task_name, str(pk), generation)
    if requeued:
        logger.warning("started over %d steps whose worker stopped", requeued)
    return requeued

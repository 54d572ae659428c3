"""The one way a step runs, in every mode: claim, load, work, then save and move on.

A mode declares, once per step model, what its work is and what follows it::

    ANSWER = StepWork(PanelAnswer, load=answer_load, work=answer_work, advance=answer_advance)

    def panel_answer_run(*, answer_id: str, generation: int) -> None:
        step_run(ANSWER, answer_id, generation)

and :func:`step_run` does the rest, in this order:

1. ``may_start(pk)`` (optional): a check before the claim (a paused debate's step waits);
2. the claim: status and lease in one statement, before anything else is loaded; a job that
   cannot claim (stale generation, taken, finished) does no work;
3. ``load(pk)``: what the work needs, read from the database;
4. the database connection is given back and ``work(job)`` runs outside any transaction
   while the lease is kept alive (:func:`arena.steps.step_lease`); it returns a
   :class:`StepResult` (or None: its step was taken from it, e.g. stopped by a person who
   saved it, and nothing is saved);
5. one transaction: the step is saved only if its generation is still current
   (:func:`arena.steps.step_save`; otherwise nothing at all is written), then what it
   produced (``result.write``), then ``advance(step)``, the mode's next-step rule, with the
   saved row.

An exception the work did not expect (in ``load``, ``work``, or writing what it produced)
fails the step with :data:`UNEXPECTED_FAILURE` (logged with its traceback) and the contest
moves on as ``advance`` says for a failed step; only a lost database connection while saving
is left to the sweep, which starts the step over once its lease runs out. A job redelivered
after its step finished (its worker died after the commit) does no work: it only calls
``advance``, which is idempotent, so what follows the step exists.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from arena import metrics
from arena.llm.ledger import call_purpose, calls_held, enter_held
from arena.steps.base import FINISHED, Step, StepStatus
from arena.steps.leases import lease_until, step_lease

logger = logging.getLogger(__name__)

UNEXPECTED_FAILURE = "This failed because of an unexpected error; it was logged."
DUE_HEADER = "arena_due_at"  # the job's message: when it was due (arena.steps.send_task)

Job = TypeVar("Job")


@dataclass
class StepResult:
    """What a step's work produced.

    ``error`` empty: the step is done; else it failed, with this message (safe to show).
    ``fields``: the step row's own columns, saved with its status. ``write``: writes the rows
    the step produced, in the save's transaction and only if the save happened.
    """

    error: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    write: Callable[[], None] | None = None

    @property
    def status(self) -> str:
        return StepStatus.FAILED if self.error else StepStatus.DONE


@dataclass
class StepWork(Generic[Job]):
    """How one step model is worked (see the module's docstring for the order).

    ``advance(step)`` is the next-step rule: it gets the saved (or found finished) row, runs
    inside a transaction, and must be idempotent, since a redelivered job calls it again.
    """

    model: type[Step]
    load: Callable[[Any], Job]
    work: Callable[[Job], StepResult | None]
    advance: Callable[[Any], None]
    may_start: Callable[[Any], bool] | None = None


def step_run(work: StepWork, pk, generation: int) -> bool:
    """Run the job ``(pk, generation)`` of a step; True if it did the work and saved it. The
    worker thread gives its database connection back when the step ends: a worker holds
    hundreds of threads and a pool of ten, and a thread waiting for its next task must not
    keep one (the test's worker, without Celery's Django fix-up, kept one per thread and ran
    the pool dry)."""
    try:
        return _run(work, pk, generation)
    finally:
        release_database()


def _run(work: StepWork, pk, generation: int) -> bool:
    model = work.model
    if (work.may_start is None or work.may_start(pk)) and step_claim(model, pk, generation):
        return _work_and_save(work, pk, generation)
    with transaction.atomic():
        step = model.objects.filter(pk=pk, generation=generation, status__in=FINISHED).first()
        if step is not None:  # redelivered after it finished: make sure what follows exists
            work.advance(step)
    logger.info("%s %s: generation %s not claimed (%s)", model.__name__, pk, generation,
                "finished: what follows is there" if step is not None
                else "stale, taken or waiting to start")
    return False


def _work_and_save(work: StepWork, pk, generation: int) -> bool:
    model = work.model
    claimed, waited = time.perf_counter(), _queue_wait()
    with calls_held() as calls:
        try:
            job = work.load(pk)
            release_database()
            with step_lease(model, pk, generation), \
                    call_purpose(model._meta.app_label, model.__name__):
                result = work.work(job)
        except Exception:
            logger.exception("%s %s failed unexpectedly", model.__name__, pk)
            result = StepResult(error=UNEXPECTED_FAILURE)
    enter_held(calls)  # the calls it made, whatever becomes of its result
    if result is None:
        logger.info("%s %s was taken from its job (generation %s)", model.__name__, pk,
                    generation)
        metrics.step_done(model, "taken", seconds=time.perf_counter() - claimed,
                          waited=waited)
        return False
    metrics.step_done(model, result.status, seconds=time.perf_counter() - claimed,
                      waited=waited)
    try:
        return _save(work, pk, generation, result)
    except (InterfaceError, OperationalError):
        raise  # the database, not the step: the sweep starts it over when its lease runs out
    except Exception:
        if result.error == UNEXPECTED_FAILURE:
            raise
        # What the work produced could not be written: the step fails like any other bug.
        logger.exception("%s %s: its result could not be saved", model.__name__, pk)
        return _save(work, pk, generation, StepResult(error=UNEXPECTED_FAILURE))


def _save(work: StepWork, pk, generation: int, result: StepResult) -> bool:
    model = work.model
    with transaction.atomic():
        if not step_save(model, pk, generation, status=result.status,
                         error=result.error[:300], **result.fields):
            logger.info("%s %s was started over meanwhile: generation %s writes nothing",
                        model.__name__, pk, generation)
            return False
        if result.write is not None:
            result.write()
        work.advance(model.objects.get(pk=pk))
    return True


def _queue_wait() -> float | None:
    """Seconds from the job's being due to now, read off the running task's message (None
    where no worker runs it: a test calling ``step_run`` itself)."""
    from celery import current_task  # noqa: PLC0415 - Celery: workers, not setup

    due = current_task.request.get(DUE_HEADER) if current_task else None
    return None if due is None else time.time() - float(due)


def step_claim(model: type[Step], pk, generation: int) -> bool:
    """Take a waiting step for this job: status and lease in one statement."""
    now = timezone.now()
    return bool(model.objects.filter(pk=pk, generation=generation, status=StepStatus.PENDING)
                .update(status=StepStatus.RUNNING, lease_expires_at=lease_until(now),
                        updated_at=now))


def step_save(model: type[Step], pk, generation: int, *, status: str, **fields) -> bool:
    """Save the result of a claimed step, only if its generation is still current."""
    return bool(model.objects.filter(pk=pk, generation=generation, status=StepStatus.RUNNING)
                .update(status=status, lease_expires_at=None, updated_at=timezone.now(),
                        **fields))


def release_database() -> None:
    """Give this thread's database connection back to the pool before a long wait (a model
    call). SQLite has no pool: its per-thread connection is kept."""
    if connection.vendor != "sqlite" and not connection.in_atomic_block:
        connection.close()

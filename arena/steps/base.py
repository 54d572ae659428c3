"""The abstract row for one unit of model work, shared by every mode."""

from __future__ import annotations

from typing import ClassVar

from django.db import models

from arena.models import UpdatedAtModel


class StepStatus(models.TextChoices):
    PENDING = "pending", "Waiting"
    RUNNING = "running", "Writing"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


FINISHED = (StepStatus.DONE, StepStatus.FAILED)


def failed_for_good(statuses) -> bool:  # noqa: ANN001 - any iterable of step statuses
    """Every step finished and at least one failed (none is being retried)."""
    statuses = list(statuses)
    return StepStatus.FAILED in statuses and all(s in FINISHED for s in statuses)

RESTARTED_NOTICE = "The worker restarted; writing this answer again."


class Step(UpdatedAtModel):
    """One unit of model work: a battle side, a panel answer or judgement, a debate step.

    ``generation`` is bumped whenever the work is started over, so an older job can never
    save; ``lease_expires_at`` is set by the claim and pushed forward by heartbeats while the
    job runs, and a job whose lease ran out is requeued by the sweep (:mod:`arena.steps`).
    A subclass names the Celery task that runs it (``task_name``); the task is called with
    ``(str(pk), generation)``.
    """

    task_name: ClassVar[str] = ""

    status = models.CharField(max_length=10, choices=StepStatus.choices,
                              default=StepStatus.PENDING)
    error = models.CharField(max_length=300, blank=True, help_text="Safe to show a person.")
    generation = models.PositiveIntegerField(
        default=0, help_text="Bumped when started over, so a stale job cannot overwrite."
    )
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Provider attempts.")
    restarts = models.PositiveSmallIntegerField(
        default=0, help_text="Times the work was started over because its worker stopped."
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    served_by = models.CharField(
        max_length=10, blank=True,
        help_text="Which endpoint of the model answered: own, or its fallback.")

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED

    @property
    def notice(self) -> str:
        """What a page shows while the work is being started over."""
        return RESTARTED_NOTICE if self.restarts and not self.is_finished else ""

    def on_requeued(self) -> None:
        """Called after the sweep started this step over (e.g. to tell an open page)."""

    def usage_fields(self, completion) -> dict:  # noqa: ANN001 - arena.llm.Completion
        """The usage columns of a finished model call, for :func:`arena.steps.step_save`."""
        return {
            "latency_ms": completion.latency_ms,
            "input_tokens": completion.input_tokens,
            "output_tokens": completion.output_tokens,
            "cost_usd": completion.cost_usd,
            "attempts": completion.attempts,
            "served_by": completion.served_by,
        }

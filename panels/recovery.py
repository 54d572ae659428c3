"""Recovery of panels whose steps died with their worker (run every two minutes by beat)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from panels.services import panel_advance
from panels.models import (
    FINISHED_STEPS,
    ClarificationRound,
    Panel,
    PanelAnswer,
    PanelJudgement,
    PanelStatus,
    RoundPhase,
    StepStatus,
)

logger = logging.getLogger(__name__)


def panel_resume_stale(*, older_than_seconds: int | None = None) -> int:
    """Restart steps whose job died with its worker, and advance panels left waiting.

    Answers and judgements stuck waiting or working get their generation bumped (a job that
    was only slow can no longer save) and are enqueued again; so are clarification calls and
    question generation. Returns how many steps were restarted.
    """
    from panels import tasks

    seconds = older_than_seconds or settings.ARENA_PANEL_STALE_SECONDS
    cutoff = timezone.now() - timedelta(seconds=seconds)
    restarted = 0
    for model, task in ((PanelAnswer, tasks.panel_answer), (PanelJudgement, tasks.panel_judge)):
        stale = model.objects.filter(status__in=[StepStatus.PENDING, StepStatus.RUNNING],
                                     updated_at__lt=cutoff).values_list("pk", flat=True)
        for pk in stale:
            with transaction.atomic():
                row = model.objects.select_for_update().get(pk=pk)
                if row.status in FINISHED_STEPS:
                    continue
                row.generation += 1
                row.status = StepStatus.PENDING
                row.save(update_fields=["generation", "status", "updated_at"])
                task.delay_on_commit(str(row.pk), row.generation)
                restarted += 1
    rounds = ClarificationRound.objects.filter(
        phase__in=[RoundPhase.CHECKING, RoundPhase.REFINING], updated_at__lt=cutoff,
        panel__status=PanelStatus.CLARIFYING)
    for round_ in rounds:
        round_.save(update_fields=["updated_at"])
        tasks.panel_clarification_step.delay(str(round_.pk))
        restarted += 1
    for panel in Panel.objects.filter(status=PanelStatus.GENERATING, updated_at__lt=cutoff):
        panel.save(update_fields=["updated_at"])
        tasks.panel_generate_question.delay(str(panel.pk))
        restarted += 1
    waiting = Panel.objects.filter(status__in=[PanelStatus.ANSWERING, PanelStatus.JUDGING],
                                   updated_at__lt=cutoff).values_list("pk", flat=True)
    for panel_id in waiting:
        panel_advance(panel_id=panel_id)
    if restarted:
        logger.warning("restarted %d panel steps whose job had stopped", restarted)
    return restarted

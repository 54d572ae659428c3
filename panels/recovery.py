"""Recovery of a panel's non-step work (run every two minutes by beat).

Answers and judgements are platform steps: the platform's sweep starts them over when their
lease expires (:func:`arena.steps.step_requeue_stale`). What is left here: clarification calls
and question writing whose job died (sent again; each checks its phase, so a duplicate does
nothing), and panels whose last step finished without moving the panel on (advanced).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from arena.steps import enqueue_task
from panels.models import ClarificationRound, Panel, PanelStatus, RoundPhase
from panels.services import panel_advance

logger = logging.getLogger(__name__)


def panel_resume_stale(*, older_than_seconds: int | None = None) -> int:
    """Send again the clarification and question jobs untouched for ``older_than_seconds``
    and advance panels left waiting; returns how many jobs were sent again."""
    seconds = older_than_seconds or settings.ARENA_PANEL_STALE_SECONDS
    cutoff = timezone.now() - timedelta(seconds=seconds)
    restarted = 0
    rounds = ClarificationRound.objects.filter(
        phase__in=[RoundPhase.CHECKING, RoundPhase.REFINING], updated_at__lt=cutoff,
        panel__status=PanelStatus.CLARIFYING)
    for round_ in rounds:
        round_.save(update_fields=["updated_at"])
        enqueue_task("panels.tasks.panel_clarification_step", str(round_.pk))
        restarted += 1
    for panel in Panel.objects.filter(status=PanelStatus.GENERATING, updated_at__lt=cutoff):
        panel.save(update_fields=["updated_at"])
        enqueue_task("panels.tasks.panel_generate_question", str(panel.pk))
        restarted += 1
    waiting = Panel.objects.filter(status__in=[PanelStatus.ANSWERING, PanelStatus.JUDGING],
                                   updated_at__lt=cutoff).values_list("pk", flat=True)
    for panel_id in waiting:
        panel_advance(panel_id=panel_id)
    if restarted:
        logger.warning("sent again %d panel jobs whose worker had stopped", restarted)
    return restarted

"""Debate mode's step model for the platform's lifecycle test (:class:`StepCase`)."""

from __future__ import annotations

from debates.models import Debate, DebateStatus, DebateStep, StepKind
from debates.steps import STEP, debate_step_run
from debates.tests.debate_support import debate_row
from testkit.steps import StepCase


def round_two_opening() -> DebateStep:
    """A debate in progress whose second round the moderator is about to open."""
    debate = debate_row(rounds=2)
    return DebateStep.objects.create(debate=debate, kind=StepKind.MODERATOR, round=2)


def failed_with_its_reason(step: DebateStep) -> None:
    debate = Debate.objects.get(pk=step.debate_id)
    assert debate.status == DebateStatus.FAILED
    assert debate.error == f"{step}: {step.error}"


CASES = {DebateStep: StepCase(
    work=STEP, make=round_two_opening, moved_on=failed_with_its_reason,
    run=lambda pk, generation: debate_step_run(step_id=pk, generation=generation))}

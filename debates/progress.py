"""Where a debate stands, in seed 004's terms: ``currentRound`` and ``currentSpeaker``.

``currentRound`` is the round under way (its moderator, a speech or a fact-check), or, once
the rounds are over (judging, or the debate ended), the last round a speech was written in;
0 before the first step. ``currentSpeaker`` is ``pro`` or ``con`` while that side's speech is
being written (a strict-mode rewrite too), and None when nobody speaks: between speeches,
while the moderator speaks or a claim is checked, during judging, while paused and once
ended. A side is a position, never a model: both stay blind.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.steps import StepStatus
from debates.models import Debate, DebateStatus, DebateStep, StepKind


@dataclass(frozen=True)
class Progress:
    round: int
    speaker: str | None

    def as_json(self) -> dict:
        return {"currentRound": self.round, "currentSpeaker": self.speaker}


def progress_of(debate: Debate, steps: list[DebateStep]) -> Progress:
    """From the debate and its steps in the order they were made."""
    pending = [s for s in steps if s.status in (StepStatus.PENDING, StepStatus.RUNNING)]
    current = pending[-1] if pending and not debate.is_finished else None
    spoken = max((s.round for s in steps
                  if s.kind == StepKind.TURN and s.status == StepStatus.DONE), default=0)
    round_ = current.round if current is not None and current.round else spoken
    speaking = (current is not None and current.kind == StepKind.TURN
                and debate.status != DebateStatus.PAUSED)
    return Progress(round=round_, speaker=current.position if speaking else None)


def debate_progress(*, debate_id) -> Progress | None:
    """The progress of the debate as committed now; None if it is gone."""
    debate = Debate.objects.filter(pk=debate_id).first()
    if debate is None:
        return None
    return progress_of(debate, list(debate.steps.all()))

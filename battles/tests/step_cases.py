"""Text battles' step model for the platform's lifecycle test (:class:`StepCase`)."""

from __future__ import annotations

from arena.steps import StepStatus
from battles import services
from battles.models import Response, Slot
from battles.steps import RESPONSE, response_run
from battles.tests.factories import ResponseFactory, TurnFactory
from testkit.steps import StepCase


def waiting_answer() -> Response:
    """A first turn whose side B is answered and side A is waiting for its job."""
    turn = TurnFactory()
    ResponseFactory(turn=turn, slot=Slot.B)
    return ResponseFactory(turn=turn, slot=Slot.A, status=StepStatus.PENDING, text="",
                           latency_ms=None, output_tokens=None)


def retried(response: Response) -> None:
    """A failed side is the person's to try again: the retry starts a new generation."""
    battle = response.turn.battle
    again = services.response_retry(battle=battle, position=battle.position_of(response.slot))
    assert (again.pk, again.status, again.generation) == (
        response.pk, StepStatus.PENDING, response.generation + 1)


CASES = {Response: StepCase(
    work=RESPONSE, make=waiting_answer, moved_on=retried,
    run=lambda pk, generation: response_run(response_id=pk, generation=generation))}

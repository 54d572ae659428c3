"""The JSON API waits, without a thread, until every answer of a turn is finished."""

from __future__ import annotations

from arena.aio import database_call
from arena.steps import FINISHED
from arena.stream_wait import wait_until
from battles.selectors import TurnAnswer, turn_answers
from battles.streams import battle_group


async def turn_wait_finished(*, battle_id, turn_id, timeout: float) -> list[TurnAnswer] | None:
    """The turn's answers, left first, once every one is finished; None after ``timeout``."""
    @database_call
    def check() -> tuple[list[TurnAnswer] | None, int]:
        answers = turn_answers(turn_id=turn_id)
        running = sum(answer.status not in FINISHED for answer in answers)
        return (None if running else answers), running

    return await wait_until(battle_group(battle_id), check, timeout=timeout)

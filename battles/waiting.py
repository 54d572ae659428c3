"""The JSON API waits, without a thread, until every answer of a turn is finished."""

from __future__ import annotations

from arena.aio import database_call
from arena.steps import FINISHED
from arena.streaming import wait_until
from battles.selectors import SideView, turn_sides
from battles.streams import battle_group


async def turn_wait_finished(*, battle_id, turn_id, timeout: float) -> list[SideView] | None:
    """The turn's sides, left first, once every answer is finished; None after ``timeout``."""
    @database_call
    def check() -> tuple[list[SideView] | None, int]:
        sides = turn_sides(turn_id=turn_id)
        running = sum(side.response.status not in FINISHED for side in sides)
        return (None if running else sides), running

    return await wait_until(battle_group(battle_id), check, timeout=timeout)

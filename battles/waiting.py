"""The JSON API waits, without a thread, until every answer of a turn is finished."""

from __future__ import annotations

from asgiref.sync import sync_to_async

from arena.steps import FINISHED
from arena.streaming import wait_until
from battles.models import Response
from battles.streams import battle_group


async def turn_wait_finished(*, battle_id, turn_id, timeout: float) -> bool:
    @sync_to_async
    def finished() -> bool:
        statuses = Response.objects.filter(turn_id=turn_id).values_list("status", flat=True)
        return all(status in FINISHED for status in statuses)

    return await wait_until(battle_group(battle_id), finished, timeout=timeout)

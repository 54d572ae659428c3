"""Waiting, without a thread, until every answer of a turn is finished.

The JSON API answers once, with both answers: it listens on the battle's
channel-layer group and re-reads the database when an answer finishes (and
every two seconds in case an event was missed).
"""

from __future__ import annotations

import asyncio
import time

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from battles.generation import battle_group
from battles.models import Response, ResponseStatus

FINISHED = (ResponseStatus.DONE, ResponseStatus.FAILED)


@sync_to_async
def _turn_finished(turn_id) -> bool:
    statuses = Response.objects.filter(turn_id=turn_id).values_list("status", flat=True)
    return all(status in FINISHED for status in statuses)


async def turn_wait_finished(*, battle_id, turn_id, timeout: float) -> bool:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    group = battle_group(battle_id)
    await layer.group_add(group, channel)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if await _turn_finished(turn_id):
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            await _next_finish_event(layer, channel, min(remaining, 2.0))
    finally:
        await layer.group_discard(group, channel)


async def _next_finish_event(layer, channel: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            event = await asyncio.wait_for(layer.receive(channel), timeout=remaining)
        except TimeoutError:
            return
        if event.get("message", {}).get("event") in ("done", "failed"):
            return

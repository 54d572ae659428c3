"""A battle's live stream: its channel-layer group and the meta each answer's chunks carry.

Only the screen position and random ids travel; nothing names the model.
"""

from __future__ import annotations

from arena.steps import RESTARTED_NOTICE
from arena.streaming import StreamRelay, publish_sync


def battle_group(battle_id) -> str:
    return f"battle.{battle_id}"


def response_meta(response, position: str) -> dict:
    return {"response": str(response.id), "position": position}


def response_relay(battle, response) -> StreamRelay:
    return StreamRelay(group=battle_group(battle.id), stream_id=str(response.id),
                       meta=response_meta(response, battle.position_of(response.slot)))


def announce_restart(response) -> None:
    """Tell an open page that this answer is being written again (its worker stopped)."""
    battle = response.turn.battle
    publish_sync(battle_group(battle.id), {
        "event": "restart", "seq": 0, "notice": RESTARTED_NOTICE,
        **response_meta(response, battle.position_of(response.slot)),
    })


def announce_stopped(battle, response) -> None:
    """Tell open pages and waiting API calls that this answer ended (stopped by the person)."""
    publish_sync(battle_group(battle.id), {
        "event": "done", **response_meta(response, battle.position_of(response.slot)),
    })

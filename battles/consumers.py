"""The battle socket: a battle's stream events, for the page that owns it (or anyone once
the battle is voted)."""

from __future__ import annotations

from arena.streaming import StreamConsumer
from battles.selectors import battle_streaming_responses, battle_visible
from battles.streams import battle_group


class BattleConsumer(StreamConsumer):
    def authorize(self, *, session_key, battle_id):
        battle = battle_visible(battle_id=battle_id, session_key=session_key)
        if battle is None:
            return None
        return battle_group(battle.id), battle_streaming_responses(battle=battle)

"""The battle socket: relays a battle's stream events to the page that owns it."""

from __future__ import annotations

import json
import uuid

import redis.asyncio as aioredis
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from battles.generation import battle_group, partial_key


class BattleConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        try:
            self.battle_id = uuid.UUID(self.scope["url_route"]["kwargs"]["battle_id"])
        except ValueError:
            await self.close(code=4404)
            return
        session = self.scope.get("session")
        session_key = session.session_key if session is not None else None
        streaming = await self._authorize(session_key)
        if streaming is None:
            await self.close(code=4404)
            return
        self.group = battle_group(self.battle_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        # Joined first, snapshot second: nothing published after the join is missed,
        # and the page drops chunks whose sequence number the snapshot already holds.
        await self._send_snapshots(streaming)

    async def disconnect(self, code):
        group = getattr(self, "group", None)
        if group:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def battle_event(self, event):
        await self.send_json(event["message"])

    @database_sync_to_async
    def _authorize(self, session_key):
        from battles.selectors import battle_for_viewer, battle_streaming_responses

        battle = battle_for_viewer(battle_id=self.battle_id, session_key=session_key)
        if battle is None:
            return None
        return battle_streaming_responses(battle=battle)

    async def _send_snapshots(self, streaming: list[tuple[str, str]]) -> None:
        if not streaming:
            return
        client = aioredis.from_url(settings.REDIS_URL)
        try:
            for response_id, position in streaming:
                raw = await client.get(partial_key(response_id))
                if raw:
                    snapshot = json.loads(raw)
                    await self.send_json({"event": "snapshot", "response": response_id,
                                          "position": position, **snapshot})
        finally:
            await client.aclose()

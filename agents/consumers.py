"""``WS /battles/{id}/agent-stream?agent=a|b``: the caller's side of the audio proxy.

Only the session that owns the battle may connect, only to a free slot (A first, then B).
A refusal is accepted, explained in one JSON message and closed with ``4000 + status``
(4404, 4409...), so the page can say why.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from agents import services
from agents.adapters import adapter_for
from agents.adapters.base import AgentUnavailable, UnavailableAdapter
from agents.proxy import CALLER_ENDED, CALLER_LEFT, CallSession
from arena.errors import RuleError
from arena.inputs import parse_uuid
from arena.sessions import owner_key


def _open(*, battle_id: str, label: str, session):
    """In a thread: reading the session's key vets it against the session table."""
    conversation = services.conversation_open(
        battle_id=parse_uuid(battle_id), label=label,
        session_key=owner_key(session))
    try:
        adapter = adapter_for(conversation.agent_config, conversation.scenario)
    except AgentUnavailable as exc:
        adapter = UnavailableAdapter(str(exc))
    return conversation, adapter


class AgentStreamConsumer(AsyncWebsocketConsumer):
    # No channel layer: the call's audio and events go between its own two sockets, never
    # through Redis. With the layer, Channels listened on Redis for the call too, and a Redis
    # that died ended every call in progress (the listener's error closed the socket).
    channel_layer_alias = "none"  # not configured: Channels gives the consumer no layer
    call: CallSession | None = None

    async def connect(self) -> None:
        await self.accept()
        query = parse_qs(self.scope.get("query_string", b"").decode())
        try:
            conversation, adapter = await database_sync_to_async(_open)(
                battle_id=self.scope["url_route"]["kwargs"]["battle_id"],
                label=(query.get("agent") or [""])[0].lower(),
                session=self.scope.get("session"))
        except RuleError as exc:
            await self.send(text_data=json.dumps({"type": "error", "detail": exc.message,
                                                  "status": exc.status}))
            await self.close(code=4000 + exc.status)
            return
        self.call = CallSession(conversation=conversation, adapter=adapter,
                                send_bytes=lambda pcm: self.send(bytes_data=pcm),
                                send_json=lambda data: self.send(text_data=json.dumps(data)),
                                close=self.close)
        await self.call.start()

    async def dispatch(self, message) -> None:
        """Audio frames go straight to their handler. Channels would first hop to a worker
        thread to close stale database connections, for every message: at 100 calls that
        hop was a fifth of the proxy's CPU. Frames touch no database, and what does (opening
        and saving the call) runs through ``database_sync_to_async``, which closes them."""
        if message["type"] == "websocket.receive":
            await self.websocket_receive(message)
            return
        await super().dispatch(message)

    async def receive(self, text_data=None, bytes_data=None) -> None:
        if self.call is None:
            return
        if bytes_data is not None:
            await self.call.caller_audio(bytes_data)
            return
        try:
            message = json.loads(text_data or "")
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("type") == "end":
            await self.call.finish(CALLER_ENDED)

    async def disconnect(self, code) -> None:
        if self.call is not None:
            await self.call.finish(CALLER_LEFT)

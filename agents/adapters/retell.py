"""A Retell agent: its REST API for the agent and the call, its LiveKit room for the audio.

Retell has no raw-audio WebSocket any more, so a call is a web call. Each configuration
gets a Retell LLM (``POST /create-retell-llm``: model, a prompt and a begin message that are
dynamic variables, an ``end_call`` tool) and an agent (``POST /create-agent``:
``response_engine`` and ``voice_id``), created once and cached on the configuration (again
when its settings or the API's address change). A call is ``POST /v2/create-web-call`` with
the scenario as ``retell_llm_dynamic_variables``; its ``access_token`` joins the call's
room through a :class:`agents.adapters.media.MediaLeg`. Hanging up leaves the room and asks
``POST /v2/stop-call/{id}``; afterwards ``GET /v2/get-call/{id}`` gives Retell's own
latency for the reveal.

=========================  ==============================================================
room event                 adapter event
=========================  ==============================================================
``update``                 :class:`TranscriptUpdate`: earlier utterances final, the last
                           partial until the next one starts
``agent_start_talking``    ``speaking``
``agent_stop_talking``     its last utterance final, then ``listening``
``metadata``               kept for the post-call report
agent audio                :class:`AudioChunk` (16 kHz)
the agent left             the session ends ("the agent ended the call")
the room was lost          the session ends with the dropped-line error
=========================  ==============================================================
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils.module_loading import import_string

from agents.adapters.base import AgentAdapter, AgentStatus, AudioChunk, TranscriptUpdate
from agents.adapters.local import Brief
from agents.adapters.managed import (
    LINE_DROPPED,
    ProviderAPI,
    ProviderError,
    instructions,
    latency_report,
)
from agents.adapters.media import Left, MediaJoinError, MediaLeg, Packet
from agents.models import AgentConfiguration

logger = logging.getLogger(__name__)

END_CALL_TOOL = {"type": "end_call", "name": "end_call",
                 "description": "Hang up when the caller's task is done and they said goodbye."}


class RetellAdapter(AgentAdapter):
    def __init__(self, *, config, brief: Brief, max_seconds: int) -> None:  # noqa: ANN001
        super().__init__()
        self.config_id = config.pk
        self.slug = config.slug
        self.settings = dict(config.config_json)
        self.cached = dict(config.provider_state_json or {})
        self.brief = brief
        self.max_seconds = max_seconds
        self.api = ProviderAPI(name="Retell", base_url=settings.RETELL_BASE_URL,
                               key_env="RETELL_API_KEY")
        self.call_id = ""
        self.metadata: list[dict] = []
        self.leg: MediaLeg | None = None
        self._reader: asyncio.Task | None = None
        self._utterances: list[tuple[str, str]] = []
        self._finalised = 0
        self._partial = ""
        self._hanging_up = False

    # -- the agent, once per configuration ------------------------------------------------

    def _fingerprint(self) -> str:
        text = json.dumps({"api": settings.RETELL_BASE_URL, "config": self.settings},
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    async def agent_id(self) -> str:
        fingerprint = self._fingerprint()
        if self.cached.get("fingerprint") == fingerprint and self.cached.get("agent_id"):
            return self.cached["agent_id"]
        llm = await self.api.call("POST", "/create-retell-llm", {
            "model": self.settings.get("model", "gpt-4.1-mini"),
            "general_prompt": "{{instructions}}", "begin_message": "{{first_message}}",
            "start_speaker": "agent", "general_tools": [END_CALL_TOOL]})
        agent = await self.api.call("POST", "/create-agent", {
            "response_engine": {"type": "retell-llm", "llm_id": llm.get("llm_id")},
            "voice_id": self.settings.get("voice_id", ""),
            "agent_name": f"arena {self.slug}"})
        if not llm.get("llm_id") or not agent.get("agent_id"):
            raise ProviderError("Retell created an LLM or agent without its id",
                                shown="its provider answered with something unreadable")
        self.cached = {"fingerprint": fingerprint, "llm_id": llm["llm_id"],
                       "agent_id": agent["agent_id"]}
        await database_sync_to_async(_remember)(self.config_id, self.cached)
        return self.cached["agent_id"]

    # -- the call -------------------------------------------------------------------------

    async def start(self) -> None:
        agent_id = await self.agent_id()
        call = await self.api.call("POST", "/v2/create-web-call", {
            "agent_id": agent_id,
            "retell_llm_dynamic_variables": {"instructions": instructions(self.brief),
                                             "first_message": self.brief.first_message},
            "agent_override": {"agent": {"max_call_duration_ms": self.max_seconds * 1000}},
        })
        self.call_id = str(call.get("call_id", ""))
        token = call.get("access_token")
        if not token or not self.call_id:
            raise ProviderError("Retell created a web call without an access token or id",
                                shown="its provider answered with something unreadable")
        self.leg = import_string(settings.ARENA_RETELL_MEDIA_LEG)()
        try:
            await self.leg.join(settings.RETELL_LIVEKIT_URL, token)
        except MediaJoinError as exc:
            await self._stop_call()
            raise ProviderError(f"Retell call {self.call_id}: {exc}",
                                shown="its provider's audio line could not be opened") from exc
        self._reader = asyncio.create_task(self._read())

    async def send_audio(self, pcm: bytes) -> None:
        if self.leg is not None and self.ended is None:
            await self.leg.send(pcm)

    async def _read(self) -> None:
        async for event in self.leg.events():
            if isinstance(event, bytes):
                self.emit(AudioChunk(event))
            elif isinstance(event, Packet):
                self._packet(event.data)
            elif isinstance(event, Left) and not self._hanging_up:
                self._flush()
                if event.dropped:
                    logger.warning("Retell call %s: the room was lost mid-call", self.call_id)
                    self.finish("the agent's line dropped", LINE_DROPPED)
                else:
                    self.finish("the agent ended the call")

    def _packet(self, data: dict) -> None:
        kind = data.get("event_type")
        if kind == "update":
            self._update(data.get("transcript") or [])
        elif kind == "agent_start_talking":
            self.emit(AgentStatus("speaking"))
        elif kind == "agent_stop_talking":
            if self._utterances and self._utterances[-1][0] == "agent":
                self._flush()  # what it said is complete once it stopped talking
            self.emit(AgentStatus("listening"))
        elif kind == "metadata":
            self.metadata.append(data.get("metadata"))

    def _update(self, transcript: list) -> None:
        """Retell sends the recent utterances again with each change; every utterance but
        the last is final, the last grows until the next begins."""
        incoming = [("agent" if u.get("role") == "agent" else "user",
                     str(u.get("content", "")).strip())
                    for u in transcript if isinstance(u, dict) and u.get("role") in
                    ("agent", "user")]
        if not incoming:
            return
        known = self._utterances
        start = len(known)
        role, first = incoming[0]
        for index in range(len(known) - 1, -1, -1):
            said = known[index]
            if said[0] == role and (first.startswith(said[1]) or said[1].startswith(first)):
                start = index
                break
        self._utterances = known[:start] + incoming
        last = len(self._utterances) - 1
        for index in range(self._finalised, last):
            self.emit(TranscriptUpdate(*self._utterances[index]))
            self._finalised, self._partial = index + 1, ""
        role, text = self._utterances[last]
        if text and text != self._partial and last >= self._finalised:
            self._partial = text
            self.emit(TranscriptUpdate(role, text, final=False))

    def _flush(self) -> None:
        """The call is over: its last utterance is final."""
        if self._finalised < len(self._utterances) and self._utterances[-1][1]:
            self.emit(TranscriptUpdate(*self._utterances[-1]))
            self._finalised = len(self._utterances)

    async def _stop_call(self) -> None:
        try:
            await self.api.call("POST", f"/v2/stop-call/{self.call_id}",
                                accept=(404, 409))
        except ProviderError as exc:
            logger.warning("Retell call %s not stopped: %s", self.call_id, exc)

    async def end(self) -> None:
        self._hanging_up = True
        if self.leg is not None:
            self._flush()
            await self.leg.leave()
            await self._stop_call()
        if self._reader is not None:
            self._reader.cancel()
        self.finish("caller ended the call")

    async def provider_report(self) -> dict[str, Any]:
        if not self.call_id:
            return {}
        call = await self.api.report(f"/v2/get-call/{self.call_id}", lambda c: (
            c.get("call_status") in ("ended", "error") and bool(c.get("latency"))))
        if not call:
            return {}
        latency = call.get("latency") or {}
        e2e = latency.get("e2e") or {}
        turns = e2e.get("values") or ([e2e["p50"]] if e2e.get("p50") is not None else [])
        components = {name: (latency.get(name) or {}).get("p50")
                      for name in ("llm", "tts", "asr")
                      if (latency.get(name) or {}).get("p50") is not None}
        return latency_report("retell", turns, components_ms=components,
                              ended_reason=call.get("disconnection_reason", ""),
                              metadata=self.metadata)


def _remember(config_id, state: dict) -> None:  # noqa: ANN001
    AgentConfiguration.objects.filter(pk=config_id).update(provider_state_json=state)

"""A Vapi agent over Vapi's WebSocket transport (docs.vapi.ai/calls/websocket-transport).

``POST {VAPI_BASE_URL}/call`` creates the call with a transient assistant built from the
agent's configuration (model, voice, transcriber) whose prompt and first message are
template variables, filled per call through ``assistantOverrides.variableValues`` with the
scenario. The answer's ``transport.websocketCallUrl`` is opened with the same bearer key and
kept here (it is the call: never logged, never sent to the page). On that socket binary
frames are raw 16 kHz 16-bit PCM both ways and text frames are JSON: Vapi's client messages
come in (mapped below to the adapter's events) and ``{"type": "end-call"}`` hangs up. While
the caller is quiet the adapter sends silence, as Vapi ends a call whose audio stops
(``silence-timed-out``). After the call ``GET /call/{id}`` gives Vapi's own per-turn
latencies for the reveal.

============================  ===========================================================
Vapi message                  adapter event
============================  ===========================================================
``status-update``             ``ended``: the session ends (reason from ``endedReason``)
``speech-update``             the agent's ``speaking`` / ``listening``
``transcript``                :class:`TranscriptUpdate` (``partial`` → ``final=False``)
``conversation-update``       kept: the provider's history, for the post-call report
``tool-calls``                :class:`ToolCallEvent` per call, with the simulated result
``user-interrupted``          ``interrupted`` (the page drops the agent's queued audio)
``hang``                      ``thinking`` (the agent is late; the time limit still runs),
                              counted for the report
``model-output``              counted for the report (what is spoken comes as transcripts)
============================  ===========================================================
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from django.conf import settings
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from agents.adapters.base import (
    AgentAdapter,
    AgentStatus,
    AudioChunk,
    ToolCallEvent,
    TranscriptUpdate,
)
from agents.adapters.local import Brief
from agents.adapters.managed import (
    AGENT_FAILED,
    END_CALL_PHRASES,
    LINE_DROPPED,
    ProviderAPI,
    ProviderError,
    instructions,
    latency_report,
)
from agents.speech.audio import SAMPLE_RATE, silence

logger = logging.getLogger(__name__)
# The transport's own logger: at DEBUG websockets would write the request's headers (the
# key) and the call's URL, so it says nothing below a warning whatever the root level.
_socket_logger = logging.getLogger("agents.adapters.vapi.socket")
_socket_logger.setLevel(logging.WARNING)

CLIENT_MESSAGES = ["status-update", "speech-update", "transcript", "conversation-update",
                   "tool-calls", "user-interrupted", "hang", "model-output"]
KEEPALIVE_MS = 100
ENDED_REASONS = {
    "customer-ended-call": "caller ended the call",
    "assistant-ended-call": "the agent ended the call",
    "assistant-said-end-call-phrase": "the agent ended the call",
    "assistant-ended-call-after-message-spoken": "the agent ended the call",
    "exceeded-max-duration": "time limit reached",
    "silence-timed-out": "the line was silent too long",
}


def _tool(tool: dict) -> dict:
    params = tool.get("parameters") or {}
    return {"type": "function", "async": True,
            "function": {"name": tool.get("name", ""),
                         "description": tool.get("description", ""),
                         "parameters": {"type": "object",
                                        "properties": {k: {"type": v} for k, v in params.items()},
                                        "required": list(params)}}}


def assistant_for(config: dict, brief: Brief, *, max_seconds: int) -> dict[str, Any]:
    """The transient assistant of one configuration; the scenario arrives as variables."""
    model = {"provider": config.get("model_provider", "openai"), "model": config["model"],
             "messages": [{"role": "system", "content": "{{instructions}}"}]}
    if brief.tools:
        model["tools"] = [_tool(t) for t in brief.tools]
    assistant = {"model": model, "firstMessage": "{{first_message}}",
                 "firstMessageMode": "assistant-speaks-first",
                 "maxDurationSeconds": max_seconds, "endCallPhrases": END_CALL_PHRASES,
                 "clientMessages": CLIENT_MESSAGES, "serverMessages": [],
                 "backgroundSound": "off"}
    for key in ("voice", "transcriber"):
        if config.get(key):
            assistant[key] = config[key]
    return assistant


class VapiAdapter(AgentAdapter):
    def __init__(self, *, config: dict, brief: Brief, max_seconds: int) -> None:
        super().__init__()
        self.brief = brief
        self.body = {
            "assistant": assistant_for(config, brief, max_seconds=max_seconds),
            "assistantOverrides": {"variableValues": {
                "instructions": instructions(brief), "first_message": brief.first_message}},
            "transport": {"provider": "vapi.websocket",
                          "audioFormat": {"format": "pcm_s16le", "container": "raw",
                                          "sampleRate": SAMPLE_RATE}},
        }
        self.api = ProviderAPI(name="Vapi", base_url=settings.VAPI_BASE_URL,
                               key_env="VAPI_API_KEY")
        self.call_id = ""
        self.history: list[dict] = []
        self.model_tokens = 0
        self.hangs = 0
        self._socket = None
        self._tasks: list[asyncio.Task] = []
        self._last_caller_audio = 0.0
        self._odd_byte = b""
        self._hanging_up = False

    async def start(self) -> None:
        call = await self.api.call("POST", "/call", self.body)
        self.call_id = str(call.get("id", ""))
        url = (call.get("transport") or {}).get("websocketCallUrl")
        if not url or not self.call_id:
            raise ProviderError("Vapi created a call without a transport URL or id",
                                shown="its provider answered with something unreadable")
        try:
            self._socket = await connect(url, additional_headers=self.api.auth_headers,
                                         open_timeout=settings.ARENA_VOICE_PROVIDER_TIMEOUT,
                                         close_timeout=2, max_size=2 ** 22,
                                         logger=_socket_logger)
        except Exception as exc:  # refused, HTTP error on upgrade, timeout, bad URL
            raise ProviderError(f"Vapi's transport for call {self.call_id} could not be "
                                f"opened: {type(exc).__name__}",
                                shown="its provider's audio line could not be opened") from exc
        self._last_caller_audio = time.monotonic()
        self._tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._keepalive())]

    async def send_audio(self, pcm: bytes) -> None:
        self._last_caller_audio = time.monotonic()
        await self._send(pcm)

    async def _send(self, data: bytes | str) -> None:
        if self._socket is None or self.ended is not None:
            return
        with contextlib.suppress(ConnectionClosed):
            await self._socket.send(data)

    async def _keepalive(self) -> None:
        """Silence while the caller sends nothing, so Vapi hears an open line."""
        quiet = silence(KEEPALIVE_MS)
        while self.ended is None:
            await asyncio.sleep(KEEPALIVE_MS / 1000)
            if time.monotonic() - self._last_caller_audio >= KEEPALIVE_MS / 1000:
                await self._send(quiet)

    async def _read(self) -> None:
        try:
            async for message in self._socket:
                if isinstance(message, bytes):
                    self._audio(message)
                else:
                    self._control(message)
        except ConnectionClosed:
            pass
        if self.ended is None and not self._hanging_up:
            logger.warning("Vapi call %s: the transport closed mid-call", self.call_id)
            self.finish("the agent's line dropped", LINE_DROPPED)

    def _audio(self, data: bytes) -> None:
        data = self._odd_byte + data
        cut = len(data) - len(data) % 2
        self._odd_byte = data[cut:]
        if cut:
            self.emit(AudioChunk(data[:cut]))

    def _control(self, text: str) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            logger.warning("Vapi call %s sent a text frame that is not a JSON object",
                           self.call_id)
            return
        kind = str(message.get("type", ""))
        if kind.startswith("transcript"):
            role = "agent" if message.get("role") == "assistant" else "user"
            text = str(message.get("transcript", "")).strip()
            if text:
                self.emit(TranscriptUpdate(role, text,
                                           final=message.get("transcriptType") != "partial"))
        elif kind == "speech-update":
            if message.get("role") == "assistant":
                started = message.get("status") == "started"
                self.emit(AgentStatus("speaking" if started else "listening"))
        elif kind == "status-update":
            if message.get("status") == "ended":
                self._ended(str(message.get("endedReason", "")))
        elif kind == "tool-calls":
            self._tool_calls(message.get("toolCallList") or [])
        elif kind == "user-interrupted":
            self.emit(AgentStatus("interrupted"))
        elif kind == "hang":
            self.hangs += 1
            self.emit(AgentStatus("thinking"))
        elif kind == "conversation-update":
            history = message.get("messages")
            if isinstance(history, list):
                self.history = history
        elif kind == "model-output":
            self.model_tokens += 1

    def _tool_calls(self, calls: list) -> None:
        results = {t.get("name"): t.get("result") for t in self.brief.tools}
        for call in calls:
            function = (call or {}).get("function") or {}
            name = str(function.get("name", ""))
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except (TypeError, ValueError):
                arguments = {"raw": str(function.get("arguments"))[:500]}
            self.emit(ToolCallEvent(name, arguments if isinstance(arguments, dict) else {},
                                    results.get(name)))

    def _ended(self, reason: str) -> None:
        if reason in ENDED_REASONS:
            self.finish(ENDED_REASONS[reason])
        elif "error" in reason or "failed" in reason:
            logger.warning("Vapi call %s ended with %s", self.call_id, reason)
            self.finish("the agent failed", AGENT_FAILED)
        else:
            self.finish("the agent's provider ended the call")

    async def end(self) -> None:
        self._hanging_up = True
        if self._socket is not None:
            with contextlib.suppress(ConnectionClosed):
                await self._socket.send(json.dumps({"type": "end-call"}))
            await self._socket.close()
        for task in self._tasks:
            task.cancel()
        self.finish("caller ended the call")

    async def provider_report(self) -> dict[str, Any]:
        if not self.call_id:
            return {}
        call = await self.api.report(f"/call/{self.call_id}", lambda c: (
            c.get("status") == "ended" and bool(_metrics(c))))
        if not call:
            return {}
        metrics = _metrics(call)
        turns = [t.get("turnLatency") for t in metrics.get("turnLatencies") or []
                 if isinstance(t, dict)]
        components = {name: metrics.get(f"{name}LatencyAverage")
                      for name in ("model", "voice", "transcriber", "endpointing")
                      if metrics.get(f"{name}LatencyAverage") is not None}
        return latency_report("vapi", turns, components_ms=components,
                              ended_reason=call.get("endedReason", ""),
                              cost_usd=call.get("cost"), hangs=self.hangs,
                              model_output_messages=self.model_tokens,
                              history_messages=len(self.history))


def _metrics(call: dict) -> dict:
    return (call.get("artifact") or {}).get("performanceMetrics") or {}

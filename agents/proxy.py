"""One live call: the caller's socket on one side, an agent adapter on the other.

Binary frames are 16-bit mono PCM at 16 kHz both ways; text frames are JSON events
(``transcript``, ``status``, ``tool_call``, ``error``, ``session_end``). Audio goes straight
between the socket and the adapter, never through the channel layer. Both sides are
recorded on the caller's clock (:class:`agents.speech.audio.Track`), and each turn is saved
with its place in the recordings and the agent's answer latency on that clock
(:class:`agents.speech.turn_clock.TurnClock`); the call ends when the caller
ends it or hangs up, the agent ends it or fails, the scenario's time runs out, or its turn
limit is reached. Then the recordings are finished and the conversation is saved (which
starts its evaluation), and the caller hears why it ended.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from channels.db import database_sync_to_async

from agents import services
from agents.adapters.base import (
    AgentAdapter,
    AgentStatus,
    AgentUnavailable,
    AudioChunk,
    SessionEnd,
    ToolCallEvent,
    TranscriptUpdate,
)
from agents.models import recordings_dir
from agents.speech.audio import MAX_CHUNK_BYTES, SAMPLE_BYTES, Track
from agents.speech.turn_clock import TurnClock
from arena import metrics
from arena.llm.ledger import set_call_purpose

logger = logging.getLogger(__name__)

BAD_AUDIO = "Audio must be 16-bit mono PCM at 16 kHz, at most one second per message."
UNREACHABLE = "Agent {label} could not be reached{why}, so this battle cannot go on."
TIME_LIMIT = "time limit reached"
TURN_LIMIT = "turn limit reached"
CALLER_ENDED = "caller ended the call"
CALLER_LEFT = "caller hung up"


class CallSession:
    def __init__(self, *, conversation, adapter: AgentAdapter,  # noqa: ANN001 - a row
                 send_bytes: Callable[[bytes], Awaitable[None]],
                 send_json: Callable[[dict], Awaitable[None]],
                 close: Callable[[], Awaitable[None]]) -> None:
        self.conversation = conversation
        self.adapter = adapter
        self.send_bytes = send_bytes
        self.send_json = send_json
        self.close = close
        scenario = conversation.scenario
        self.max_turns = scenario.max_turns
        self.max_seconds = scenario.max_duration_seconds
        folder = Path(str(conversation.battle_id))
        self.caller_path = folder / f"{conversation.agent_label}-caller.wav"
        self.agent_path = folder / f"{conversation.agent_label}-agent.wav"
        self.turns: list[dict] = []
        self.clock = TurnClock()
        self.tool_calls: list[dict] = []
        self.replies = 0
        self.started = 0.0
        self.finished = False
        self._pump: asyncio.Task | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._ending: asyncio.Future | None = None
        self._done = asyncio.Event()
        self._tracks: tuple[Track, Track] | None = None

    def _ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    async def start(self) -> None:
        self.started = time.monotonic()
        # The model calls of the call (an offline agent's) are entered as the voice mode's.
        set_call_purpose("agents", "AgentConversation")
        base = recordings_dir()
        self._tracks = (Track(base / self.caller_path), Track(base / self.agent_path))
        try:
            await self.adapter.start()
        except AgentUnavailable as exc:
            logger.warning("voice agent %s unavailable: %s", self.conversation.agent_config_id,
                           exc)
            label = self.conversation.agent_label.upper()
            why = f": {exc.shown}" if exc.shown else ""
            await self.finish("agent unavailable", UNREACHABLE.format(label=label, why=why))
            return
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.max_seconds,
                                      lambda: self._end_later(TIME_LIMIT))
        self._pump = asyncio.create_task(self._relay_agent())
        await self.send_json({"type": "started", "max_seconds": self.max_seconds,
                              "max_turns": self.max_turns})

    async def caller_audio(self, pcm: bytes) -> None:
        if self.finished or self._tracks is None:
            return
        if not pcm or len(pcm) % SAMPLE_BYTES or len(pcm) > MAX_CHUNK_BYTES:
            await self.send_json({"type": "error", "detail": BAD_AUDIO})
            return
        self._tracks[0].write(pcm)
        self.clock.caller(pcm, end=self._tracks[0].samples)
        await self.adapter.send_audio(pcm)

    async def _relay_agent(self) -> None:
        async for event in self.adapter.events():
            if isinstance(event, AudioChunk):
                self._agent_audio(event.pcm)
                await self.send_bytes(event.pcm)
            elif isinstance(event, TranscriptUpdate):
                await self._transcript(event)
            elif isinstance(event, ToolCallEvent):
                self.tool_calls.append({"name": event.name, "arguments": event.arguments,
                                        "result": event.result, "at_ms": self._ms()})
                await self.send_json({"type": "tool_call", "name": event.name})
            elif isinstance(event, AgentStatus):
                self.clock.status(event.state)
                await self.send_json({"type": "status", "state": event.state})
                if event.state == "listening" and self.replies >= self.max_turns:
                    self._end_later(TURN_LIMIT)
            elif isinstance(event, SessionEnd):
                self._end_later(event.reason, event.error, event.provider_metrics)
                return

    def _agent_audio(self, pcm: bytes) -> None:
        """Record the agent's audio on the caller's clock and time the reply it begins."""
        track = self._tracks[1]
        track.write(pcm, at_sample=self._tracks[0].samples)
        self.clock.agent(pcm, start=track.samples - len(pcm) // SAMPLE_BYTES)

    def _end_later(self, *args) -> None:  # noqa: ANN002
        """Finish in a task of its own, held here: the loop keeps only a weak reference to
        a task, and a finish collected halfway would lose the end of the call."""
        if self._ending is None:
            self._ending = asyncio.ensure_future(self.finish(*args))

    async def _transcript(self, event: TranscriptUpdate) -> None:
        if event.final:
            self.turns.append(self.clock.turn({"role": event.role, "text": event.text,
                                               "at_ms": self._ms()}))
            if event.role == "agent" and any(t["role"] == "user" for t in self.turns):
                self.replies += 1
        await self.send_json({"type": "transcript", "role": event.role, "text": event.text,
                              "final": event.final})

    async def finish(self, reason: str, error: str = "",
                     provider_metrics: dict | None = None) -> None:
        """End the call once, whoever ends it; save everything that was recorded. A later
        call waits for the first to be done: the consumer's disconnect does, so a call whose
        socket has closed has been saved whole, the provider's report included."""
        if self.finished:
            await self._done.wait()
            return
        self.finished = True
        try:
            await self._finish(reason, error, provider_metrics)
        finally:
            self._done.set()

    async def _finish(self, reason: str, error: str, provider_metrics: dict | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        try:
            await self.adapter.end()
        except Exception:
            logger.exception("voice agent adapter failed to hang up")
        if self._pump is not None and self._pump is not asyncio.current_task():
            self._pump.cancel()
        ended = time.monotonic()
        length = max((t.samples for t in self._tracks or ()), default=0)
        for track in self._tracks or ():
            track.close(length=length)
        reported = provider_metrics or (self.adapter.ended.provider_metrics
                                        if self.adapter.ended else {})
        await database_sync_to_async(services.conversation_close)(
            conversation_id=self.conversation.pk, error=error, end_reason=reason,
            turns=self.turns, tool_calls=self.tool_calls,
            duration_seconds=ended - self.started,
            user_audio_path=str(self.caller_path), agent_audio_path=str(self.agent_path),
            provider_metrics=reported)
        metrics.voice_call_ended("failed" if error else "ended", [
            t["latency_ms"] for t in self.turns if t.get("latency_ms") is not None])
        try:
            await self.send_json({"type": "session_end", "reason": reason, "error": error,
                                  "turns": sum(1 for t in self.turns if t["role"] == "user"),
                                  "duration_seconds": round(ended - self.started, 1)})
            await self.close()
        except Exception:  # the caller's socket is already gone
            logger.debug("voice call ended after the caller left")
        # The provider's own account of the call (Vapi's, Retell's latencies) is fetched
        # once the caller has heard the end: it is shown only after the vote.
        report = await self.adapter.provider_report()
        if report:
            await database_sync_to_async(services.conversation_report_save)(
                conversation_id=self.conversation.pk, report=report)

"""The agent behind a fake provider: it greets, waits for the caller to finish a sentence
(Silero VAD, as a provider's endpointing does), says what its transcriber "heard", calls a
tool and answers, its speech eSpeak NG's, sent as 20 ms frames in real time. Each fake turns
what it does into its own protocol through :class:`Voice`; faults are scripted."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from agents.speech.audio import FRAME_MS, frames
from agents.tests.voice_support import AGENT_REPLY, CALLER_LINE

LEAD_FRAMES = 3


@dataclass
class AgentScript:
    reply: str = AGENT_REPLY
    heard: str = CALLER_LINE  # what the provider's transcriber writes for the caller's turn
    tool: str | None = "check_availability"
    hang_up_after_reply: bool = False
    # After the greeting: "drop" (the line dies), "error" (the provider fails), "silence"
    # (Vapi times the line out); "stall": after the caller's turn the agent goes quiet
    # (Vapi says "hang").
    fault: str | None = None
    turn_latencies_ms: list[float] = field(default_factory=lambda: [812.0, 947.0])


class Voice(ABC):
    """How one provider tells the caller what its agent does."""

    @abstractmethod
    async def audio(self, pcm: bytes) -> None: ...

    @abstractmethod
    async def speech(self, started: bool) -> None: ...

    @abstractmethod
    async def transcript(self, role: str, text: str, final: bool) -> None: ...

    async def tool_call(self, name: str, arguments: dict) -> None:  # noqa: B027 - optional
        """A provider that shows tool calls live says so."""

    async def token(self, text: str) -> None:  # noqa: B027 - optional
        """A provider that streams the model's tokens says so."""

    @abstractmethod
    async def fault(self, kind: str) -> None: ...

    @abstractmethod
    async def hang_up(self) -> None: ...


class ScriptedAgent:
    def __init__(self, *, greeting: str, script: AgentScript, voice: Voice) -> None:
        from agents.speech.vad import Endpointer

        self.greeting = greeting
        self.script = script
        self.voice = voice
        self.caller_bytes = 0
        self.turns = 0
        self._endpointer = Endpointer()
        self._turn = asyncio.Event()

    def feed(self, pcm: bytes) -> None:
        self.caller_bytes += len(pcm)
        if "end" in self._endpointer.feed(pcm):
            self._turn.set()

    async def run(self) -> None:
        await self.say(self.greeting)
        if self.script.fault in ("drop", "error", "silence"):
            await self.voice.fault(self.script.fault)
            return
        while True:
            await self._turn.wait()
            self._turn.clear()
            self.turns += 1
            await self.voice.transcript("user", self.script.heard, True)
            if self.script.fault == "stall":
                await self.voice.fault("stall")
                return
            if self.script.tool:
                await self.voice.tool_call(self.script.tool, {"day": "Tuesday"})
            for word in self.script.reply.split():
                await self.voice.token(word + " ")
            await self.say(self.script.reply)
            if self.script.hang_up_after_reply:
                await self.voice.hang_up()
                return

    async def say(self, text: str) -> None:
        from agents.speech.tts import synthesize

        pcm = await asyncio.to_thread(synthesize, text)
        pieces = list(frames(pcm))
        words = text.split()
        loop = asyncio.get_running_loop()
        started = loop.time()
        await self.voice.speech(True)
        for index, frame in enumerate(pieces):
            if index and index % 50 == 0:  # a partial transcript each second of speech
                shown = max(1, len(words) * index // len(pieces))
                await self.voice.transcript("agent", " ".join(words[:shown]), False)
            await self.voice.audio(frame)
            ahead = started + (index + 1 - LEAD_FRAMES) * FRAME_MS / 1000 - loop.time()
            if ahead > 0:
                await asyncio.sleep(ahead)
        await asyncio.sleep(max(0.0, started + len(pieces) * FRAME_MS / 1000 - loop.time()))
        await self.voice.speech(False)
        await self.voice.transcript("agent", text, True)

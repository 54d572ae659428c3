"""A trivial agent that plays the caller's audio straight back: what the proxy benchmark and
the proxy's own tests measure it with (no model in the way)."""

from __future__ import annotations

from agents.adapters.base import AgentAdapter, AudioChunk


class EchoAdapter(AgentAdapter):
    async def start(self) -> None:
        pass

    async def send_audio(self, pcm: bytes) -> None:
        self.emit(AudioChunk(pcm))

    async def end(self) -> None:
        self.finish("caller ended the call")

"""The one interface every voice agent is reached through (seed 002's ``AgentAdapter``).

An adapter opens a session with ``start``, takes the caller's audio with ``send_audio``
(16 kHz 16-bit mono PCM) and hangs up with ``end``; everything the agent does comes out of
``events()`` as one of a few normalised types, whatever the provider's own format::

    adapter = adapter_for(config, scenario)
    await adapter.start()
    async for event in adapter.events():      # AudioChunk, TranscriptUpdate, ToolCallEvent,
        ...                                   # AgentStatus, ..., and SessionEnd last
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AudioChunk:
    """Agent speech, 16 kHz 16-bit mono PCM."""

    pcm: bytes


@dataclass(frozen=True)
class TranscriptUpdate:
    role: str  # "user" or "agent"
    text: str
    final: bool = True


@dataclass(frozen=True)
class ToolCallEvent:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    result: Any = None


@dataclass(frozen=True)
class AgentStatus:
    """Something the caller's page may show: ``speaking``, ``listening``, ``thinking``,
    ``interrupted`` (the caller talked over the agent, whose audio stopped)."""

    state: str


@dataclass(frozen=True)
class SessionEnd:
    """The last event: why the session ended, and an error safe to show if it failed."""

    reason: str
    error: str = ""
    provider_metrics: dict[str, Any] = field(default_factory=dict)


Event = AudioChunk | TranscriptUpdate | ToolCallEvent | AgentStatus | SessionEnd


class AgentUnavailable(Exception):
    """This agent cannot be reached; the message says why, for the logs and the admin (it
    may name the provider). ``shown`` is what the caller may read before the vote: never
    the provider's name, only what went wrong ("refused the key (HTTP 401)")."""

    def __init__(self, message: str, *, shown: str = "") -> None:
        super().__init__(message)
        self.shown = shown


class AgentAdapter(ABC):
    """Base class: subclasses push events with :meth:`emit` and end with :meth:`finish`."""

    def __init__(self) -> None:
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self.ended: SessionEnd | None = None

    @abstractmethod
    async def start(self) -> None:
        """Open the session (may raise :class:`AgentUnavailable`)."""

    @abstractmethod
    async def send_audio(self, pcm: bytes) -> None:
        """The caller's audio, as it arrives."""

    @abstractmethod
    async def end(self) -> None:
        """Hang up; must be safe to call twice and after the agent ended itself."""

    async def provider_report(self) -> dict[str, Any]:
        """After the call: what the provider itself reports of it (its latencies), fetched
        from its API; empty when it reports nothing. Never raises."""
        return {}

    def emit(self, event: Event) -> None:
        if self.ended is None:
            self._events.put_nowait(event)

    def finish(self, reason: str, error: str = "", **provider_metrics: Any) -> None:
        if self.ended is None:
            self.ended = SessionEnd(reason, error, provider_metrics)
            self._events.put_nowait(self.ended)

    async def events(self) -> AsyncIterator[Event]:
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, SessionEnd):
                return


class UnavailableAdapter(AgentAdapter):
    """Stands in for an agent that could not be reached: its session fails to start with the
    reason, so the call ends at once, explained, through the same path as any other."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason

    async def start(self) -> None:
        raise AgentUnavailable(self.reason)

    async def send_audio(self, pcm: bytes) -> None:
        pass

    async def end(self) -> None:
        self.finish("agent unavailable", self.reason)

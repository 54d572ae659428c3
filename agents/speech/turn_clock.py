"""Each turn's place in the recordings and each answer's latency, measured live by the proxy.

The clock is the caller's recording (:class:`agents.speech.audio.Track`): a position is the
number of samples recorded so far, so what is measured here is where the turn lies in the
saved files, whatever the network did. Every saved turn gets

* ``start_ms`` / ``end_ms`` — where its audio begins and ends in its recording, in ms from
  the recording's start (the caller's speech in the caller's file, the agent's in the
  agent's; both files share the clock);
* ``latency_ms`` — for an agent turn that answers the caller: from the end of the caller's
  speech (the last loud caller frame) to the agent's first audio; None for the greeting, a
  caller turn, or an agent that began within a frame of the caller's speech (over it).

The caller's speech is found by level, frame by frame: a frame louder than -55 dBFS and
than four times the quietest audible frame heard (the room), or in any case than -30 dBFS
(a voice at the microphone; so that the first frames, speech among them, cannot set a floor
speech never clears). Digital silence, which a microphone sends before it opens or while
muted, sets no floor. That costs one RMS per frame; the recordings are measured again
after the call with Silero VAD (:mod:`agents.speech.vad`). An agent's reply
begins with its first audible audio (above -55 dBFS) after a silence once the caller has
spoken at least ``MIN_TURN_MS`` since the last reply (the first audio of all is the
greeting); audio after a pause with no caller turn in between goes on the same reply, and
so does audio after a pause while the agent still says it is speaking (its own status,
:meth:`TurnClock.status`): a caller who talks over the end of the greeting does not make
the greeting's last sentence a reply. An agent that never says its state is judged by the
pauses alone. A transcript may arrive before or after the audio it belongs to: an agent
turn takes the reply whose audio began since the caller's last turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.speech.audio import FRAME_SAMPLES, SAMPLE_RATE

MIN_TURN_MS = 90  # caller sound shorter than this (a click, a breath) is no turn
QUIETEST_LEVEL = 10 ** (-55 / 20)
VOICE_LEVEL = 10 ** (-30 / 20)
TIMING_KEYS = ("start_ms", "end_ms", "latency_ms")


def _ms(samples: int | None) -> int | None:
    return None if samples is None else round(samples * 1000 / SAMPLE_RATE)


def _level(pcm: bytes) -> tuple[float, int]:
    """RMS (0..1) and samples of 16-bit PCM (one dot product: this runs for every frame of
    every call, both ways)."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
    if not len(samples):
        return 0.0, 0
    return (float(samples.dot(samples)) / len(samples)) ** 0.5 / 32768.0, len(samples)


def latency_stats(values: list[float]) -> dict[str, float | int | None]:
    """Average, p50 and p95 of answer latencies, and how many there are."""
    if not values:
        return {"avg_ms": None, "p50_ms": None, "p95_ms": None, "answered": 0}
    array = np.array(values, dtype=float)
    return {"avg_ms": round(float(array.mean()), 1),
            "p50_ms": round(float(np.percentile(array, 50)), 1),
            "p95_ms": round(float(np.percentile(array, 95)), 1), "answered": len(values)}


class TurnClock:
    def __init__(self) -> None:
        self._quietest: float | None = None
        self._caller_onset: int | None = None  # the caller's speech since the last reply
        self._caller_end: int | None = None  # where the last loud caller frame ended
        self._caller_voiced = 0  # loud caller samples since the last reply began
        self._agent_end: int | None = None  # where the agent's last audible audio ended
        self._last_stretch: tuple[int | None, int | None] = (None, None)
        self._reply: dict[str, Any] | None = None  # the agent's reply being heard
        self._reply_claimed = True
        self._waiting: dict[str, Any] | None = None  # an agent turn whose audio has not begun
        self._states_said = False  # the agent has said its state (speaking, listening, …)
        self._stopped_speaking = False  # … and said it stopped speaking since its last reply

    def caller(self, pcm: bytes, *, end: int) -> None:
        """A caller frame that ends at sample ``end`` of the caller's recording."""
        level, count = _level(pcm)
        if not count:
            return
        if level <= QUIETEST_LEVEL:
            return
        self._quietest = level if self._quietest is None else min(self._quietest, level)
        if level <= min(4 * self._quietest, VOICE_LEVEL):
            return
        if self._caller_onset is None:
            self._caller_onset = end - count
        self._caller_end = end
        self._caller_voiced += count

    def agent(self, pcm: bytes, *, start: int) -> None:
        """Agent audio placed at sample ``start`` of the agent's recording. Only what can be
        heard counts: a voice's lead-in of silence is not its first audio."""
        level, count = _level(pcm)
        if level <= QUIETEST_LEVEL:
            return
        after_silence = self._agent_end is None or start - self._agent_end > FRAME_SAMPLES
        self._agent_end = start + count
        if self._reply is None or (after_silence and self._caller_spoke()
                                   and self._agent_turned()):
            self._reply_begins(start)
        elif after_silence and not self._caller_spoke():  # the caller's sound made no turn
            self._caller_onset, self._caller_voiced = None, 0
        self._reply["end_ms"] = _ms(self._agent_end)

    def status(self, state: str) -> None:
        """The agent's own word on its state (``speaking``, ``listening``, ``thinking``,
        ``interrupted``): a reply can begin only once it has stopped speaking."""
        self._states_said = True
        if state != "speaking":
            self._stopped_speaking = True

    def _caller_spoke(self) -> bool:
        return self._caller_voiced * 1000 >= MIN_TURN_MS * SAMPLE_RATE

    def _agent_turned(self) -> bool:
        return self._stopped_speaking or not self._states_said

    def _reply_begins(self, start: int) -> None:
        latency = None
        if self._caller_spoke():
            if start - self._caller_end > FRAME_SAMPLES:  # else it talked over the caller
                latency = round((start - self._caller_end) * 1000 / SAMPLE_RATE, 1)
            self._last_stretch = (self._caller_onset, self._caller_end)
            self._caller_onset, self._caller_voiced = None, 0
        self._stopped_speaking = False
        reply = {"start_ms": _ms(start), "end_ms": _ms(start), "latency_ms": latency}
        if self._waiting is not None:
            self._waiting.update(reply)
            self._reply, self._reply_claimed, self._waiting = self._waiting, True, None
        else:
            self._reply, self._reply_claimed = reply, False

    def turn(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Add the timing keys to a final transcript turn (``role`` ``user`` or ``agent``)."""
        entry.update(dict.fromkeys(TIMING_KEYS))
        if entry.get("role") == "user":
            self._waiting = None
            onset, end = ((self._caller_onset, self._caller_end)
                          if self._caller_onset is not None else self._last_stretch)
            entry.update(start_ms=_ms(onset), end_ms=_ms(end))
        elif self._reply is not None and not self._reply_claimed:
            entry.update(self._reply)
            self._reply, self._reply_claimed = entry, True
        elif self._waiting is None:
            self._waiting = entry
        return entry

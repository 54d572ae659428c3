"""Each saved turn's place in the recordings and its answer latency, measured live on the
caller's clock (:mod:`agents.speech.turn_clock`)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.speech.audio import FRAME_SAMPLES
from agents.speech.turn_clock import TurnClock, latency_stats

LOUD = (np.ones(FRAME_SAMPLES) * 8000).astype("<i2").tobytes()
HUSH = (np.ones(FRAME_SAMPLES) * 20).astype("<i2").tobytes()  # a quiet room, not speech
SILENT = bytes(FRAME_SAMPLES * 2)


class Call:
    """The proxy's two clocks in miniature: the caller's frames, the agent's audio."""

    def __init__(self) -> None:
        self.clock = TurnClock()
        self.caller_samples = 0
        self.agent_samples = 0

    def caller(self, frame: bytes, count: int) -> None:
        for _ in range(count):
            self.caller_samples += FRAME_SAMPLES
            self.clock.caller(frame, end=self.caller_samples)

    def agent(self, frames: int, frame: bytes = LOUD) -> None:
        """The agent's audio from now on (where the caller's recording stands)."""
        for _ in range(frames):
            start = max(self.caller_samples, self.agent_samples)
            self.agent_samples = start + FRAME_SAMPLES
            self.clock.agent(frame, start=start)


def test_an_answer_carries_its_latency_and_both_turns_their_place_in_the_recording():
    call = Call()
    greeting = call.clock.turn({"role": "agent", "text": "Hello"})  # its words before its audio
    call.agent(50)  # 0 - 1000 ms
    call.caller(HUSH, 60)  # 1200 ms, the caller listens (the room hums)
    call.caller(LOUD, 75)  # speaks 1200 - 2700 ms
    call.caller(SILENT, 40)  # 800 ms of quiet
    user = call.clock.turn({"role": "user", "text": "Book me in"})
    call.agent(5, SILENT)  # its voice's lead-in of silence, 3500 - 3600 ms
    call.agent(25)  # answers at 3600 ms, for 500 ms
    call.caller(SILENT, 10)
    call.agent(10)  # a pause with no caller turn in between: the same reply goes on
    answer = call.clock.turn({"role": "agent", "text": "Booked"})  # words after the audio
    assert greeting == {"role": "agent", "text": "Hello", "start_ms": 0, "end_ms": 1000,
                        "latency_ms": None}
    assert (user["start_ms"], user["end_ms"], user["latency_ms"]) == (1200, 2700, None)
    assert (answer["start_ms"], answer["latency_ms"]) == (3600, 900.0)
    assert answer["end_ms"] == 4300


def test_digital_silence_sets_no_noise_floor():
    """A microphone opens with exact zeros, then hums at about -45 dBFS: the hum is the floor,
    not speech, so the caller's turn ends where the voice does and the answer is timed."""
    hum = (np.ones(FRAME_SAMPLES) * 180).astype("<i2").tobytes()  # -45 dBFS
    call = Call()
    call.caller(SILENT, 10)  # 0 - 200 ms
    call.caller(hum, 50)  # 200 - 1200 ms
    call.caller(LOUD, 50)  # speaks 1200 - 2200 ms
    call.caller(hum, 30)  # the room again, 600 ms
    user = call.clock.turn({"role": "user", "text": "Book me in"})
    call.agent(10)
    answer = call.clock.turn({"role": "agent", "text": "Booked"})
    assert (user["start_ms"], user["end_ms"]) == (1200, 2200)
    assert answer["latency_ms"] == 600.0


def test_an_agent_that_talks_over_the_caller_has_no_latency_and_a_cough_is_no_turn():
    call = Call()
    call.agent(10)  # the greeting
    call.caller(LOUD, 3)  # 60 ms: a cough, no turn
    call.caller(SILENT, 20)
    call.agent(10)  # more of the greeting, after a pause: not an answer
    greeting = call.clock.turn({"role": "agent", "text": "Hi"})
    assert (greeting["start_ms"], greeting["latency_ms"]) == (0, None)
    call.caller(LOUD, 30)  # 460 - 1060 ms
    call.agent(10)  # starts in the frame after the caller's last: over the caller
    user = call.clock.turn({"role": "user", "text": "I would like"})
    over = call.clock.turn({"role": "agent", "text": "Sorry?"})
    assert (user["start_ms"], user["end_ms"]) == (460, 1060)  # the cough left out
    assert over["start_ms"] == 1060 and over["latency_ms"] is None


def test_a_caller_who_talks_over_the_greetings_last_sentence_makes_no_reply_of_it():
    """The greeting comes late (a busy machine) and the caller starts speaking in its pause
    between sentences; the agent still says it is speaking, so its last sentence stays the
    greeting and the answer after the caller's turn is the one timed."""
    call = Call()
    call.clock.status("speaking")
    greeting = call.clock.turn({"role": "agent", "text": "Thanks for calling. How can I help?"})
    call.agent(50)  # 0 - 1000 ms: the first sentence
    call.caller(SILENT, 50)
    call.caller(LOUD, 10)  # the caller starts at 1000 ms, in the greeting's pause
    call.agent(40)  # 1200 - 2000 ms: the greeting's second sentence, over the caller
    call.caller(LOUD, 40)  # speaks on until 2000 ms
    call.clock.status("listening")
    call.caller(SILENT, 30)  # 600 ms of quiet
    user = call.clock.turn({"role": "user", "text": "Book me in"})
    call.clock.status("thinking")
    call.clock.status("speaking")
    call.agent(10)
    answer = call.clock.turn({"role": "agent", "text": "Booked"})
    assert (greeting["start_ms"], greeting["end_ms"], greeting["latency_ms"]) == (0, 2000, None)
    assert (user["start_ms"], user["end_ms"]) == (1000, 2000)
    assert (answer["start_ms"], answer["latency_ms"]) == (2600, 600.0)


@pytest.mark.parametrize(("values", "expected"), [
    ([], {"avg_ms": None, "p50_ms": None, "p95_ms": None, "answered": 0}),
    ([800.0], {"avg_ms": 800.0, "p50_ms": 800.0, "p95_ms": 800.0, "answered": 1}),
    ([100.0, 300.0], {"avg_ms": 200.0, "p50_ms": 200.0, "p95_ms": 290.0, "answered": 2}),
])
def test_latency_stats(values, expected):
    assert latency_stats(values) == expected


@pytest.mark.django_db
def test_calls_saved_before_the_timing_get_its_keys_as_not_measured():
    from importlib import import_module

    from django.apps import apps

    from agents.models import AgentConversation
    from agents.tests.voice_support import echo_agents, make_battle

    migration = import_module("agents.migrations.0006_turn_timing")
    battle = make_battle("owner", echo_agents())
    timed = {"role": "agent", "text": "Hi", "start_ms": 0, "end_ms": 900, "latency_ms": None}
    calls = [AgentConversation.objects.create(
        battle=battle, agent_config=config, scenario=battle.scenario, agent_label=label,
        turns_json=turns) for label, config, turns in (
            ("a", battle.config_a, [{"role": "user", "text": "Hello", "at_ms": 40}]),
            ("b", battle.config_b, [timed]))]
    migration.add_timing_keys(apps, None)
    old, new = (AgentConversation.objects.get(pk=c.pk).turns_json for c in calls)
    assert old == [{"role": "user", "text": "Hello", "at_ms": 40, "start_ms": None,
                    "end_ms": None, "latency_ms": None}]
    assert new == [timed]

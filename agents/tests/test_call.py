"""A whole call through the real proxy consumer with the offline agent: eSpeak NG speech as
the caller, Silero VAD, Whisper tiny.en, the fake LLM, eSpeak NG back; then the recordings,
the saved turns and the evaluation (latency from the recordings, transcripts, the judge)."""

from __future__ import annotations

import wave

import pytest
from channels.db import database_sync_to_async

from agents.models import (
    AgentBattle,
    AgentConversation,
    ConversationStatus,
    EvaluationStage,
    recordings_dir,
)
from agents.proxy import BAD_AUDIO, CALLER_LEFT, TIME_LIMIT, TURN_LIMIT
from agents.steps import evaluation_stage_run
from agents.tests.voice_support import (
    CALLER_LINE,
    Heard,
    Microphone,
    VoiceScript,
    communicator,
    echo_agents,
    listen_until,
    local_agents,
    make_battle,
    speech,
)
from arena.steps import FINISHED
from testkit.metrics import scraped_here, value
from testkit.visitors import visitor_session_key
from testkit.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _setup(fake_openai):
    fake_openai.reply_text = VoiceScript()
    configs = local_agents(fake_openai)
    key = visitor_session_key()
    return key, make_battle(key, configs)


def _run_stages(battle_id) -> list[str]:
    """Run every waiting evaluation stage of the battle here, as the worker would (a worker
    left running by an earlier test may take some first), until all have finished."""
    stages = EvaluationStage.objects.filter(conversation__battle_id=battle_id)
    for stage in stages.filter(status="pending"):
        evaluation_stage_run(stage_id=str(stage.pk), generation=stage.generation)
    wait_for(lambda: not stages.exclude(status__in=FINISHED).exists(), timeout=60,
             what="the evaluation stages")
    return list(stages.values_list("kind", flat=True))


async def test_a_spoken_call_is_heard_answered_recorded_and_measured(fake_openai):
    key, battle = await database_sync_to_async(_setup)(fake_openai)
    before = scraped_here()
    # The greeting is spoken first; then the caller speaks their line.
    client, heard, microphone = await _listening(battle, key)
    greeting_frames = heard.audio_frames
    assert greeting_frames > 50  # > 1 s of the scenario's first message
    microphone.say(speech(CALLER_LINE))
    await listen_until(client, heard, lambda h: any(
        e["role"] == "agent" for e in h.of("transcript")[1:]) and h.of("status")[-1].get(
        "state") == "listening")
    user_lines = [e["text"] for e in heard.of("transcript") if e["role"] == "user"]
    assert len(user_lines) == 1
    assert "haircut" in user_lines[0].lower() and "smith" in user_lines[0].lower()
    # The LLM got what Whisper heard, and after it what the tools it called for returned.
    assert len(fake_openai.reply_text.heard) == 1
    words, tools = fake_openai.reply_text.heard[0].split("\n\n(Results from your tools:\n")
    assert words == user_lines[0]
    assert "check_availability:" in tools and "book_appointment:" in tools
    assert heard.audio_frames > greeting_frames + 50  # the reply was spoken back
    assert [e["name"] for e in heard.of("tool_call")] == ["check_availability",
                                                          "book_appointment"]
    await client.send_json_to({"type": "end"})
    await listen_until(client, heard, lambda h: h.of("session_end"))
    await microphone.stop()
    end = heard.of("session_end")[0]
    assert end["reason"] == "caller ended the call" and end["error"] == "" and end["turns"] == 1
    # Counted for the operators (arena.metrics): the call, and its one answer's latency.
    after = scraped_here()
    assert [value(after, name, **labels) - value(before, name, **labels) for name, labels in (
        ("arena_voice_calls_total", {"outcome": "ended"}),
        ("arena_voice_turn_latency_seconds_count", {}))] == [1, 1]

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
    # One answered turn, measured from the recordings: the agent started talking after the
    # caller stopped (the end-of-turn silence alone is 600 ms) and inside the recording.
    assert len(conversation.turn_gaps_json) == 1
    gap = conversation.turn_gaps_json[0]
    assert gap["gap_ms"] > 600 and gap["agent_started"] < lengths[0]
    assert conversation.avg_response_latency_ms == gap["gap_ms"]
    assert conversation.ttfb_avg_ms == conversation.avg_response_latency_ms
    # Each saved turn carries its place in the recordings and the answer its latency,
    # measured live on the recordings' clock: the same gap the recordings give afterwards.
    greeting, user, answer = conversation.turns_json
    assert greeting["start_ms"] == 0 and greeting["latency_ms"] is None
    assert 0 < user["start_ms"] < user["end_ms"] <= answer["start_ms"] < answer["end_ms"]
    assert answer["end_ms"] <= lengths[1] * 1000 and user["latency_ms"] is None
    assert answer["latency_ms"] == pytest.approx(gap["gap_ms"], abs=150)
    assert answer["start_ms"] == pytest.approx(gap["agent_started"] * 1000, abs=100)
    assert "caller:" in conversation.transcript_full and "agent:" in conversation.transcript_full
    assert "haircut" in conversation.transcript_full.lower()


async def test_the_wrong_visitor_and_a_taken_slot_are_refused(fake_openai):
    key, battle = await database_sync_to_async(_setup)(fake_openai)
    for who, label, code, words in ((visitor_session_key, "a", 4404, "not found"),
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


async def _call(battle, key, label="a"):
    client = communicator(battle.pk, label, key)
    connected, _ = await client.connect()
    assert connected
    heard = Heard()
    await listen_until(client, heard, lambda h: h.of("started") or h.of("session_end")
                       or h.of("error"))
    return client, heard


async def _listening(battle, key):
    """A call whose agent has said its greeting and listens, the caller's microphone on."""
    client, heard = await _call(battle, key)
    microphone = Microphone(client)
    microphone.start()
    await listen_until(client, heard, lambda h: any(
        e.get("state") == "listening" for e in h.of("status")))
    return client, heard, microphone


async def _say_until_the_call_ends(battle, key) -> Heard:
    """The caller says their line, then listens until the call ends by itself."""
    client, heard = await _call(battle, key)
    microphone = Microphone(client)
    microphone.start()
    microphone.say(speech(CALLER_LINE))
    await listen_until(client, heard, lambda h: h.of("session_end"))
    await microphone.stop()
    return heard


async def test_the_time_limit_ends_a_call_and_bad_audio_is_refused_not_fatal(fake_openai):
    def setup():
        key = visitor_session_key()
        return key, make_battle(key, echo_agents(), max_duration_seconds=1)

    key, battle = await database_sync_to_async(setup)()
    client, heard = await _call(battle, key)
    await client.send_to(bytes_data=b"\x01\x02\x03")  # half a sample
    await client.send_to(bytes_data=bytes(40_000))  # more than a second at once
    await client.send_to(bytes_data=b"\x10\x00" * 320)
    await listen_until(client, heard, lambda h: h.audio_frames == 1 or h.of("session_end"))
    assert [e["detail"] for e in heard.of("error")] == [BAD_AUDIO, BAD_AUDIO]
    assert heard.audio_bytes == 640  # the echo agent played back the one good frame
    await listen_until(client, heard, lambda h: h.of("session_end"))
    assert heard.of("session_end")[0]["reason"] == TIME_LIMIT
    conversation = await database_sync_to_async(AgentConversation.objects.get)(battle=battle)
    assert conversation.status == ConversationStatus.DONE
    assert conversation.end_reason == TIME_LIMIT


async def test_a_caller_who_hangs_up_keeps_the_call_and_its_evaluation_starts(fake_openai):
    def setup():
        key = visitor_session_key()
        return key, make_battle(key, echo_agents())

    key, battle = await database_sync_to_async(setup)()
    client, heard = await _call(battle, key)
    for _ in range(50):
        await client.send_to(bytes_data=bytes(640))
    await listen_until(client, heard, lambda h: h.audio_frames == 50)
    await client.disconnect()

    def saved():
        conversation = AgentConversation.objects.get(battle=battle)
        kinds = sorted(conversation.stages.values_list("kind", flat=True))
        return conversation, kinds

    conversation, kinds = await database_sync_to_async(saved)()
    assert conversation.status == ConversationStatus.DONE
    assert conversation.end_reason == CALLER_LEFT
    assert kinds == ["latency", "transcript"]
    with wave.open(str(recordings_dir() / conversation.user_audio_path)) as wav:
        assert wav.getnframes() == 50 * 320
    # Agent A is done, so Agent B's slot opens; A's does not open twice.
    client_b, heard_b = await _call(battle, key, "b")
    assert heard_b.of("started")
    await client_b.disconnect()
    again = communicator(battle.pk, "a", key)
    await again.connect()
    refused = await again.receive_json_from(timeout=10)
    assert refused["type"] == "error" and "already talked to Agent A" in refused["detail"]


async def test_an_agent_whose_model_fails_ends_the_call_and_the_battle_explained(fake_openai):
    from testkit.fake_providers import Behaviour

    key, battle = await database_sync_to_async(_setup)(fake_openai)
    fake_openai.default = Behaviour.status(500)
    heard = await _say_until_the_call_ends(battle, key)
    end = heard.of("session_end")[0]
    assert end["error"].startswith("The agent's language model failed")
    battle = await database_sync_to_async(AgentBattle.objects.get)(pk=battle.pk)
    assert battle.status == "failed" and battle.error == end["error"]
    conversation = await database_sync_to_async(AgentConversation.objects.get)(battle=battle)
    assert conversation.status == ConversationStatus.FAILED
    assert [t["role"] for t in conversation.turns_json] == ["agent", "user"]  # kept
    client_b, heard_b = await _call(battle, key, "b")
    assert "Start a new battle" in heard_b.of("error")[0]["detail"]


async def test_the_turn_limit_ends_the_call_after_the_last_answer(fake_openai):
    def setup():
        fake_openai.reply_text = VoiceScript()
        key = visitor_session_key()
        return key, make_battle(key, local_agents(fake_openai), max_turns=1)

    key, battle = await database_sync_to_async(setup)()
    heard = await _say_until_the_call_ends(battle, key)
    assert heard.of("session_end")[0]["reason"] == TURN_LIMIT
    assert [e["role"] for e in heard.of("transcript")] == ["agent", "user", "agent"]


async def test_an_agent_that_cannot_be_reached_ends_the_call_without_naming_it(monkeypatch):
    from agents.models import AgentConfiguration

    def setup():
        key = visitor_session_key()
        echo = echo_agents()[0]
        vapi = AgentConfiguration.objects.get(slug="vapi-default")
        return key, make_battle(key, [vapi, echo])

    monkeypatch.delenv("VAPI_API_KEY", raising=False)
    key, battle = await database_sync_to_async(setup)()
    client, heard = await _call(battle, key)
    end = heard.of("session_end")[0]
    assert end["error"] == "Agent A could not be reached, so this battle cannot go on."
    battle = await database_sync_to_async(AgentBattle.objects.get)(pk=battle.pk)
    assert battle.status == "failed" and "Vapi" not in battle.error


async def test_the_caller_talking_over_the_agent_stops_its_audio(fake_openai):
    """Barge-in: the caller starts speaking during the greeting; the agent says it was
    interrupted, its greeting's audio stops at once, and it answers the caller."""
    key, battle = await database_sync_to_async(_setup)(fake_openai)
    client, heard = await _call(battle, key)
    await listen_until(client, heard, lambda h: any(
        e.get("state") == "speaking" for e in h.of("status")))
    microphone = Microphone(client)
    microphone.start()
    microphone.say(speech(CALLER_LINE))
    await listen_until(client, heard, lambda h: [e["role"] for e in h.of("transcript")] == [
        "agent", "user", "agent"])
    await microphone.stop()
    await client.disconnect()
    statuses = {e["state"]: e["_audio_frames_before"] for e in reversed(heard.of("status"))}
    heard_user = heard.of("transcript")[1]["_audio_frames_before"]
    greeting = len(speech(battle.scenario.first_message)) // 640
    # The greeting stopped where the caller cut in, well short of its end, and no audio came
    # until the agent answered what the caller said.
    assert statuses["interrupted"] < greeting - 25
    assert statuses["interrupted"] == statuses["thinking"] == heard_user


async def test_a_pause_inside_the_callers_turn_loses_none_of_it(fake_openai):
    """The agent starts transcribing at a pause, so its answer begins sooner; when the
    caller goes on after the pause, that early guess is dropped and the whole turn is heard,
    and the badge says "thinking" from the end of the turn."""
    from agents.speech.audio import silence

    key, battle = await database_sync_to_async(_setup)(fake_openai)
    client, heard, microphone = await _listening(battle, key)
    # 400 ms of quiet inside the turn: past the guess (200 ms), short of its end (600 ms).
    microphone.say(speech("I would like a haircut.") + silence(400)
                   + speech("My name is John Smith."))
    await listen_until(client, heard, lambda h: any(
        e["role"] == "agent" for e in h.of("transcript")[1:]) and h.of("status")[-1].get(
        "state") == "listening")
    [line] = [e["text"] for e in heard.of("transcript") if e["role"] == "user"]
    assert "haircut" in line.lower() and "smith" in line.lower()
    states = [e.get("state") for e in heard.of("status")]
    assert "thinking" in states[states.index("listening"):]
    await microphone.stop()
    await client.disconnect()


@pytest.mark.parametrize(("text", "first", "pieces", "rest"), [
    ("Sure, I can book that for you. Then", True, ["Sure, I can book that for you."], "Then"),
    ("Of course, Tuesday at three works, and", True, ["Of course, Tuesday at three works,"],
     "and"),
    ("Hi! Yes, I can", True, [], "Hi! Yes, I can"),  # wait for a clause of three words
    ("Of course, Tuesday at three works, and", False, [],
     "Of course, Tuesday at three works, and"),  # later: whole sentences only
    ("Okay. That is booked. Anything", False, ["Okay.", "That is booked."], "Anything"),
])
def test_a_reply_is_spoken_from_its_first_clause_then_by_sentences(text, first, pieces, rest):
    from agents.adapters.local import ready_pieces

    assert ready_pieces(text, first=first) == (pieces, rest)

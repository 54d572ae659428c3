"""Vapi and Retell agents end to end through the real proxy consumer, against fakes that
speak their documented protocols: the requests each adapter makes, audio both ways, the
provider's events mapped to the page's, hanging up, the post-call report, and every scripted
fault ending the call with its reason shown and what was recorded kept."""

from __future__ import annotations

import json
import logging
import statistics
import wave

import pytest
from channels.db import database_sync_to_async
from django.core import serializers

from agents.adapters import STAY_ANONYMOUS
from agents.adapters.managed import AGENT_FAILED, END_CALL_PHRASES, LINE_DROPPED
from agents.models import (
    AgentBattle,
    AgentConfiguration,
    AgentConversation,
    Scenario,
    recordings_dir,
)
from agents.proxy import TIME_LIMIT
from agents.tests.fakes import FakeMediaLeg
from agents.tests.managed_support import (  # noqa: F401 - fixtures
    agent_listening,
    battle_with,
    converse,
    hang_up,
    open_call,
    retell,
    vapi,
)
from agents.tests.voice_support import CALLER_LINE, Microphone, listen_until, speech
from testkit.waiting import async_wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def evaluations_not_sent(monkeypatch):
    """A saved call starts its evaluation; here none is sent, so no worker left running by
    an earlier test evaluates it while this test's database is emptied (a flush deadlock)."""
    from agents import services

    monkeypatch.setattr(services, "step_enqueue", lambda step: None)
SCENARIO = "haircut-appointment"


async def _report(battle_id) -> dict:  # noqa: ANN001
    """The provider's report, saved just after the caller heard the call end."""
    found = AgentConversation.objects.filter(battle_id=battle_id, agent_label="a")
    return await async_wait_for(lambda: found.get().provider_metrics_json.get("provider") and
                                found.get().provider_metrics_json, timeout=20,
                                what="the provider's post-call report")


def _recorded(conversation: AgentConversation) -> tuple[int, int]:
    """Samples in the caller's and the agent's recordings (equal: one clock)."""
    lengths = []
    for relative in (conversation.user_audio_path, conversation.agent_audio_path):
        with wave.open(str(recordings_dir() / relative)) as wav:
            assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (16000, 1, 2)
            lengths.append(wav.getnframes())
    return lengths[0], lengths[1]


def _agent_audio_loud(conversation: AgentConversation) -> bool:
    import numpy as np

    with wave.open(str(recordings_dir() / conversation.agent_audio_path)) as wav:
        samples = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    return bool(len(samples)) and int(np.abs(samples).max()) > 1000


def _assert_heard_a_whole_call(heard, conversation, scenario) -> None:  # noqa: ANN001
    finals = [(e["role"], e["text"]) for e in heard.of("transcript") if e["final"]]
    assert finals[0] == ("agent", scenario.first_message)  # the greeting, as variables filled it
    assert ("user", CALLER_LINE) in finals and finals[-1][0] == "agent"
    assert any(not e["final"] for e in heard.of("transcript"))  # partials reached the page
    states = [e["state"] for e in heard.of("status")]
    assert "speaking" in states and "listening" in states
    assert heard.audio_frames > 100  # the greeting and the answer were heard
    end = heard.of("session_end")[0]
    assert end == {**end, "reason": "caller ended the call", "error": "", "turns": 1}
    assert conversation.status == "done"
    assert [t["role"] for t in conversation.turns_json] == ["agent", "user", "agent"]
    caller, agent = _recorded(conversation)
    assert caller == agent > 16000 and _agent_audio_loud(conversation)
    # Whatever the provider, each turn is placed in the recordings and the answer timed.
    greeting, user, answer = conversation.turns_json
    assert greeting["start_ms"] is not None and greeting["latency_ms"] is None
    assert user["start_ms"] < user["end_ms"] < answer["start_ms"] < answer["end_ms"]
    assert answer["end_ms"] <= agent / 16
    assert answer["latency_ms"] == pytest.approx(answer["start_ms"] - user["end_ms"], abs=1)


def _no_secret_anywhere(secret: str, heard, caplog) -> None:  # noqa: ANN001
    assert secret not in caplog.text
    assert secret not in json.dumps(heard.events)
    rows = serializers.serialize("json", [*AgentConfiguration.objects.all(),
                                          *AgentBattle.objects.all(),
                                          *AgentConversation.objects.all()])
    assert secret not in rows


# -- Vapi ----------------------------------------------------------------------------------


async def test_a_vapi_call_through_the_proxy(vapi, caplog):  # noqa: F811
    caplog.set_level(logging.DEBUG)
    key, battle = await database_sync_to_async(battle_with)("vapi-default")
    heard, conversation = await converse(battle, key)
    scenario = await database_sync_to_async(Scenario.objects.get)(slug=SCENARIO)

    (create,) = vapi.calls_to("/call")[:1]
    assert create["method"] == "POST" and create["headers"]["Authorization"] == \
        f"Bearer {vapi.api_key}"
    body = create["body"]
    assistant = body["assistant"]
    assert assistant["model"] == {**assistant["model"], "provider": "openai",
                                  "model": "gpt-4.1-mini"}
    assert assistant["model"]["messages"] == [{"role": "system", "content": "{{instructions}}"}]
    assert [t["function"]["name"] for t in assistant["model"]["tools"]] == [
        t["name"] for t in scenario.tools_available]
    assert assistant["voice"] == {"provider": "11labs", "voiceId": "burt"}
    assert assistant["transcriber"] == {"provider": "deepgram", "model": "nova-3"}
    assert assistant["firstMessage"] == "{{first_message}}"
    assert assistant["maxDurationSeconds"] == scenario.max_duration_seconds
    assert assistant["endCallPhrases"] == END_CALL_PHRASES
    variables = body["assistantOverrides"]["variableValues"]
    assert variables["first_message"] == scenario.first_message
    assert scenario.system_prompt in variables["instructions"]
    assert STAY_ANONYMOUS in variables["instructions"]

    _assert_heard_a_whole_call(heard, conversation, scenario)
    assert [e["name"] for e in heard.of("tool_call")] == ["check_availability"]
    assert conversation.tool_calls_json[0]["arguments"] == {"day": "Tuesday"}
    assert conversation.tool_calls_json[0]["result"] == scenario.tools_available[0]["result"]
    (call,) = vapi.calls.values()
    assert {"type": "end-call"} in call["control"]  # hung up over the transport
    assert call["status"] == "ended" and call["ended_reason"] == "customer-ended-call"
    assert call["caller_bytes"] >= len(speech(CALLER_LINE))  # the caller's audio reached it

    report = await _report(battle.pk)
    assert vapi.calls_to(f"/call/{next(iter(vapi.calls))}")  # GET /call/{id} after the call
    latencies = vapi.script.turn_latencies_ms
    assert report["provider"] == "vapi"
    assert report["avg_latency_ms"] == statistics.fmean(latencies)
    assert report["turn_latencies_ms"] == latencies
    assert report["components_ms"]["model"] == 300.0
    await database_sync_to_async(_no_secret_anywhere)(vapi.api_key, heard, caplog)
    url_path = f"/{next(iter(vapi.calls))}/transport"
    assert url_path not in caplog.text and url_path not in json.dumps(heard.events)


async def test_vapi_hears_silence_while_the_caller_says_nothing(vapi):  # noqa: F811
    """Vapi ends a call whose audio stops; the adapter keeps the line open with silence (a
    packet every 100 ms). The fake's timeout is its default 3 s, thirty packets, so only a
    missing keep-alive ends the call, not a busy machine's pause."""
    key, battle = await database_sync_to_async(battle_with)("vapi-default")
    client, heard = await open_call(battle, key)
    (call,) = vapi.calls.values()
    # No microphone at all: two silence timeouts' worth of audio arrives all the same (read
    # off the fake: the proxy says nothing to the page meanwhile).
    await async_wait_for(lambda: call["caller_bytes"] >= 2 * vapi.silence_timeout * 32000
                         or call["status"] == "ended",
                         what="two silence timeouts' worth of the line's audio")
    assert call["status"] == "in-progress", call.get("ended_reason")
    await client.send_json_to({"type": "end"})
    await listen_until(client, heard, lambda h: h.of("session_end"))
    await hang_up(client)
    assert heard.of("session_end")[0]["reason"] == "caller ended the call"


async def test_vapi_ending_the_call_for_silence_is_said_and_kept(vapi):  # noqa: F811
    vapi.script.fault = "silence"
    key, battle = await database_sync_to_async(battle_with)("vapi-default")
    heard, conversation = await _call_until_the_end(battle, key, speak=False)
    end = heard.of("session_end")[0]
    assert end["reason"] == "the line was silent too long" and end["error"] == ""
    assert conversation.status == "done" and _agent_audio_loud(conversation)


# -- Retell --------------------------------------------------------------------------------


async def test_a_retell_call_through_the_proxy(retell, caplog):  # noqa: F811
    caplog.set_level(logging.DEBUG)
    key, battle = await database_sync_to_async(battle_with)("retell-default")
    heard, conversation = await converse(battle, key)
    scenario = await database_sync_to_async(Scenario.objects.get)(slug=SCENARIO)

    for request in retell.requests:
        if not request["path"].startswith("/fake-livekit/"):
            assert request["headers"]["Authorization"] == f"Bearer {retell.api_key}"
    (llm,) = retell.llms.values()
    assert llm["model"] == "gpt-4.1-mini" and llm["start_speaker"] == "agent"
    assert llm["general_prompt"] == "{{instructions}}"
    assert llm["begin_message"] == "{{first_message}}"
    assert [t["type"] for t in llm["general_tools"]] == ["end_call"]
    (agent_id, agent), = retell.agents.items()
    assert agent["voice_id"] == "11labs-Adrian"
    assert agent["response_engine"] == {"type": "retell-llm", "llm_id": next(iter(retell.llms))}
    (call_id, call), = retell.calls.items()
    assert call["body"]["agent_id"] == agent_id
    variables = call["body"]["retell_llm_dynamic_variables"]
    assert variables["first_message"] == scenario.first_message
    assert scenario.system_prompt in variables["instructions"]
    assert "check_availability" in variables["instructions"]  # the simulated lookups' answers
    assert call["body"]["agent_override"]["agent"]["max_call_duration_ms"] == \
        scenario.max_duration_seconds * 1000

    _assert_heard_a_whole_call(heard, conversation, scenario)
    (leg,) = FakeMediaLeg.legs
    assert leg.token and leg.closed  # joined with the call's access token, then left
    assert call["stopped"] and call["status"] == "ended"  # POST /v2/stop-call/{id}
    assert call["caller_bytes"] >= len(speech(CALLER_LINE))  # the caller was heard in the room

    report = await _report(battle.pk)
    assert retell.calls_to(f"/v2/get-call/{call_id}")
    assert report["provider"] == "retell"
    assert report["avg_latency_ms"] == statistics.fmean(retell.script.turn_latencies_ms)
    assert report["components_ms"] == {"llm": 420.0, "tts": 180.0}
    await database_sync_to_async(_no_secret_anywhere)(retell.api_key, heard, caplog)
    assert leg.token not in caplog.text and leg.token not in json.dumps(heard.events)


async def test_retell_creates_its_agent_once_per_configuration(retell):  # noqa: F811
    key, battle = await database_sync_to_async(battle_with)("retell-default")
    await converse(battle, key)
    key, battle = await database_sync_to_async(battle_with)("retell-default")
    await converse(battle, key)
    assert len(retell.llms) == len(retell.agents) == 1 and len(retell.calls) == 2
    config = await database_sync_to_async(AgentConfiguration.objects.get)(slug="retell-default")
    assert config.provider_state_json["agent_id"] == next(iter(retell.agents))

    def change_voice():
        made = battle_with("retell-default")  # (loading the library resets the settings)
        AgentConfiguration.objects.filter(pk=config.pk).update(
            config_json={**config.config_json, "voice_id": "11labs-Myra"})
        return made

    key, battle = await database_sync_to_async(change_voice)()
    await converse(battle, key)
    assert len(retell.agents) == 2
    assert list(retell.agents.values())[-1]["voice_id"] == "11labs-Myra"


async def test_the_real_livekit_leg_that_cannot_join_ends_the_call_explained(retell, settings):  # noqa: F811
    """The ``livekit`` package's room, aimed at a port where nothing listens."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.ARENA_RETELL_MEDIA_LEG = "agents.adapters.media.LiveKitMediaLeg"
    settings.RETELL_LIVEKIT_URL = f"ws://127.0.0.1:{port}"
    key, battle = await database_sync_to_async(battle_with)("retell-default")
    client, heard = await open_call(battle, key)
    await hang_up(client)
    end = heard.of("session_end")[0]
    assert end["error"] == ("Agent A could not be reached: its provider's audio line could not "
                            "be opened, so this battle cannot go on.")
    (call,) = retell.calls.values()
    assert call["stopped"]  # the web call it could not join was stopped


# -- faults, both providers ----------------------------------------------------------------

PROVIDERS = {"vapi": ("vapi-default", "/call"), "retell": ("retell-default", "/v2/create-web-call")}


@pytest.fixture(params=list(PROVIDERS))
def provider(request):
    fake = request.getfixturevalue(request.param)
    return request.param, fake


@pytest.mark.parametrize("answer, shown", [
    (401, "its provider refused the API key (HTTP 401)"),
    (503, "its provider failed (HTTP 503)"),
    (422, "its provider rejected the call (HTTP 422)"),
    ("junk", "its provider answered with something unreadable"),
])
async def test_a_refused_call_ends_at_once_with_the_reason_and_no_name(provider, answer, shown):
    name, fake = provider
    slug, path = PROVIDERS[name]
    fake.fail(path, answer)
    key, battle = await database_sync_to_async(battle_with)(slug)
    client, heard = await open_call(battle, key)
    await hang_up(client)
    end = heard.of("session_end")[0]
    assert end["error"] == f"Agent A could not be reached: {shown}, so this battle cannot go on."
    battle = await database_sync_to_async(AgentBattle.objects.get)(pk=battle.pk)
    assert battle.status == "failed" and name not in battle.error.lower()


async def test_a_wrong_key_is_refused_and_never_shown(provider, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    name, fake = provider
    wrong = "sk-wrong-" + "x" * 24
    monkeypatch.setenv(f"{name.upper()}_API_KEY", wrong)
    key, battle = await database_sync_to_async(battle_with)(PROVIDERS[name][0])
    client, heard = await open_call(battle, key)
    await hang_up(client)
    assert "refused the API key (HTTP 401)" in heard.of("session_end")[0]["error"]
    await database_sync_to_async(_no_secret_anywhere)(wrong, heard, caplog)


async def _call_until_the_end(battle, key, *, speak: bool = True):  # noqa: ANN001, ANN202
    client, heard = await open_call(battle, key)
    microphone = Microphone(client)
    microphone.start()
    try:
        # A line that drops (or fails) right after the greeting may end the call before
        # the proxy says the agent listens: either ends this wait.
        await listen_until(client, heard, lambda h: agent_listening(h) or h.of("session_end"))
        if speak and not heard.of("session_end"):
            microphone.say(speech(CALLER_LINE))
        await listen_until(client, heard, lambda h: h.of("session_end"))
    finally:
        await microphone.stop()
        await hang_up(client)
    conversation = await database_sync_to_async(AgentConversation.objects.get)(battle=battle)
    return heard, conversation


async def test_a_line_that_drops_mid_call_keeps_what_was_said(provider):
    name, fake = provider
    fake.script.fault = "drop"
    key, battle = await database_sync_to_async(battle_with)(PROVIDERS[name][0])
    heard, conversation = await _call_until_the_end(battle, key, speak=False)
    end = heard.of("session_end")[0]
    assert end["reason"] == "the agent's line dropped" and end["error"] == LINE_DROPPED
    assert conversation.status == "failed" and conversation.error == LINE_DROPPED
    assert conversation.turns_json[0]["role"] == "agent"  # the greeting was kept
    assert _agent_audio_loud(conversation)  # and so was its audio


async def test_a_stalled_agent_runs_into_the_time_limit(provider):
    name, fake = provider
    fake.script.fault = "stall"
    key, battle = await database_sync_to_async(battle_with)(PROVIDERS[name][0],
                                                            max_duration_seconds=15)
    heard, conversation = await _call_until_the_end(battle, key)
    assert heard.of("session_end")[0]["reason"] == TIME_LIMIT
    assert [t["role"] for t in conversation.turns_json] == ["agent", "user"]
    assert conversation.status == "done"
    if name == "vapi":  # Vapi says "hang": the page shows the agent is thinking
        assert heard.of("status")[-1]["state"] == "thinking"


async def test_an_agent_that_hangs_up_ends_the_call(provider):
    name, fake = provider
    fake.script.hang_up_after_reply = True
    key, battle = await database_sync_to_async(battle_with)(PROVIDERS[name][0])
    heard, conversation = await _call_until_the_end(battle, key)
    assert heard.of("session_end")[0]["reason"] == "the agent ended the call"
    assert [t["role"] for t in conversation.turns_json] == ["agent", "user", "agent"]


async def test_vapi_failing_on_its_side_is_said_without_its_name(vapi):  # noqa: F811
    vapi.script.fault = "error"
    key, battle = await database_sync_to_async(battle_with)("vapi-default")
    heard, conversation = await _call_until_the_end(battle, key, speak=False)
    end = heard.of("session_end")[0]
    assert end["error"] == AGENT_FAILED and "openai" not in json.dumps(heard.events)
    report = await _report(battle.pk)
    assert report["ended_reason"] == "pipeline-error-openai-llm-failed"  # after the vote only


@pytest.mark.django_db
def test_validate_agents_pings_each_provider_once(vapi, retell, monkeypatch):  # noqa: F811
    from io import StringIO

    from django.core.management import call_command

    from agents.library import library_load

    library_load()
    out = StringIO()
    call_command("validate_agents", "--ping", stdout=out)
    lines = {line.split()[0]: line for line in out.getvalue().splitlines() if line.strip()}
    assert "ready (the provider accepted our key)" in lines["vapi-claude"]
    assert "ready (the provider accepted our key)" in lines["retell-default"]
    assert len(vapi.calls_to("/assistant")) == 1 and len(retell.calls_to("/list-voices")) == 1

    monkeypatch.setenv("RETELL_API_KEY", "sk-wrong")
    out = StringIO()
    call_command("validate_agents", "--ping", stdout=out)
    text = out.getvalue()
    assert "retell-default" in text and "HTTP 401" in text and "sk-wrong" not in text

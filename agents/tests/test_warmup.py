"""The offline agent is warm before its first call: the web process loads Whisper, the model
client and the greetings once it serves, the first call loads none of them again, and a
model on this machine reads the call's beginning while the greeting plays."""

from __future__ import annotations

import subprocess
import sys

import faster_whisper
import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from agents import warmup
from agents.adapters.local import Brief, LocalCascadeAdapter
from agents.library import library_load
from agents.speech import stt, tts
from agents.speech.audio import frames, silence
from agents.tests.voice_support import (
    CALLER_LINE,
    Heard,
    Microphone,
    VoiceScript,
    communicator,
    listen_until,
    local_agents,
    make_battle,
    speech,
)
from testkit.visitors import visitor_session_key
from testkit.waiting import async_wait_for, ceiling


@pytest.fixture
def cold(monkeypatch):
    """This process as a web process starts: nothing loaded, nothing kept, not warm; the
    Whisper models it builds are counted."""
    built = []

    class CountedWhisper(faster_whisper.WhisperModel):
        def __init__(self, *args, **kwargs) -> None:
            built.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(faster_whisper, "WhisperModel", CountedWhisper)
    monkeypatch.setattr(stt, "_model", None)
    monkeypatch.setattr(tts, "_kept", {})
    monkeypatch.setattr(warmup, "_warm", type(warmup._warm)())
    return built


def _battle(fake_openai):
    fake_openai.reply_text = VoiceScript()
    key = visitor_session_key()
    return key, make_battle(key, local_agents(fake_openai))


@pytest.mark.django_db(transaction=True)
async def test_the_warm_up_loads_what_the_first_call_needs_and_the_call_loads_none_again(
        fake_openai, cold):
    key, battle = await database_sync_to_async(_battle)(fake_openai)
    greeting = battle.scenario.first_message
    assert not warmup.voice_warm()

    await database_sync_to_async(warmup.voice_warm_up)()
    assert warmup.voice_warm()
    assert len(cold) == 1 and stt._model is not None
    assert "arena.llm.client" in sys.modules
    # The greeting in both agents' voices (en-us, en-gb at the default rate), kept.
    kept = tts.kept(greeting, voice="en-us", rate=170)
    assert kept and tts.kept(greeting, voice="en-gb", rate=170)
    kept_before_call = dict(tts._kept)

    client = communicator(battle.pk, "a", key)
    assert (await client.connect())[0]
    heard = Heard()
    microphone = Microphone(client)
    microphone.start()
    await listen_until(client, heard, lambda h: any(
        e.get("state") == "listening" for e in h.of("status")))
    assert heard.audio_bytes == len(list(frames(kept))) * 640  # the kept greeting, whole
    microphone.say(speech(CALLER_LINE))
    await listen_until(client, heard, lambda h: len(h.of("transcript")) >= 3)
    await microphone.stop()
    await client.disconnect()
    assert heard.of("transcript")[1]["role"] == "user"  # Whisper heard the caller...
    assert len(cold) == 1  # ...with the model the warm-up loaded
    assert tts._kept == kept_before_call  # and the greeting was not synthesized again


@pytest.mark.parametrize("local_key", ["smollm2", ""])
async def test_a_local_model_reads_the_calls_beginning_while_the_greeting_plays(
        fake_openai, local_key):
    """llama.cpp keeps what a slot has read: the instructions and the greeting are read
    before the caller has spoken, and the first reply's prompt begins with them. A hosted
    model is not asked (it would gain nothing)."""
    fake_openai.reply_text = VoiceScript()
    brief = Brief(system_prompt="You are the receptionist of Shear Delight.",
                  first_message="Thanks for calling Shear Delight.",
                  tools=[{"name": "check_availability", "triggers": ["haircut"],
                          "result": {"free": ["15:00"]}}])
    adapter = LocalCascadeAdapter(
        brief=brief, endpoint=fake_openai.endpoint("voice-llm", local_key=local_key))
    await adapter.start()
    for frame in frames(silence(300) + speech(CALLER_LINE) + silence(1000)):
        await adapter.send_audio(frame)
    await async_wait_for(lambda: any(r.messages[-1]["role"] == "user"
                                     for r in fake_openai.chat_requests),
                         what="the reply's request")
    await adapter.end()
    *read_ahead, reply = fake_openai.chat_requests
    system = reply.messages[0]
    assert reply.messages[1] == {"role": "assistant", "content": brief.first_message}
    if not local_key:
        assert read_ahead == []
        return
    assert len(read_ahead) == 1 and read_ahead[0].body["max_tokens"] == 1
    assert read_ahead[0].messages == [system, reply.messages[1]]
    # The tool's result follows the caller's words: the beginning read ahead stays as it was.
    assert "check_availability" in reply.messages[2]["content"]


PROBE = """
import sys
import daphne.server  # installs its reactor first, as the daphne command does
import arena.asgi
from twisted.internet import reactor
from agents.speech import stt, tts
from agents.warmup import voice_warm
from arena.webserver import warmed_up
print("probe", "openai" in sys.modules, stt._model is not None, flush=True)

def serving():
    if not warmed_up():
        reactor.callLater(0.1, serving)
        return
    print("probe", voice_warm(), "openai" in sys.modules, stt._model is not None,
          len(tts._kept) > 0, flush=True)
    reactor.stop()

reactor.callWhenRunning(serving)
reactor.run(installSignalHandlers=False)
"""


@pytest.mark.django_db(transaction=True)
def test_a_web_process_warms_the_offline_agent_up_once_it_serves(test_process_env):
    """Importing the application loads none of it (a test, a probe); daphne's reactor
    running does, in the background."""
    library_load()
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=settings.BASE_DIR,
                            env=test_process_env, capture_output=True, text=True,
                            timeout=ceiling(60), check=True)
    imported, serving = [line.split()[1:] for line in result.stdout.splitlines()
                         if line.startswith("probe ")]  # the rest is the process's log
    assert imported == ["False", "False"]
    assert serving == ["True", "True", "True", "True"]

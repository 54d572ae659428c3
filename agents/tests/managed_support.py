"""Fixtures and a caller for calls to the managed providers' fakes through the real proxy."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from channels.db import database_sync_to_async

from agents.library import library_load
from agents.models import AgentBattle, AgentConfiguration, AgentConversation, Provider
from agents.tests.fakes import FakeMediaLeg, FakeRetell, FakeVapi
from agents.tests.voice_support import (
    CALLER_LINE,
    Heard,
    Microphone,
    communicator,
    listen_until,
    make_battle,
    speech,
)
from testkit.visitors import visitor_session_key

FAKE_LEG = "agents.tests.fakes.FakeMediaLeg"


@pytest.fixture
def vapi(settings, monkeypatch) -> Iterator[FakeVapi]:
    with FakeVapi() as fake:
        settings.VAPI_BASE_URL = fake.base_url
        monkeypatch.setenv("VAPI_API_KEY", fake.api_key)
        yield fake


@pytest.fixture
def retell(settings, monkeypatch) -> Iterator[FakeRetell]:
    FakeMediaLeg.legs.clear()
    with FakeRetell() as fake:
        settings.RETELL_BASE_URL = fake.base_url
        settings.RETELL_LIVEKIT_URL = fake.livekit_url
        settings.ARENA_RETELL_MEDIA_LEG = FAKE_LEG
        monkeypatch.setenv("RETELL_API_KEY", fake.api_key)
        yield fake


def battle_with(slug: str, **scenario_fields) -> tuple[str, AgentBattle]:
    """A battle whose agent A is the library's ``slug`` and B an echo agent."""
    library_load()
    managed = AgentConfiguration.objects.get(slug=slug)
    echo, _ = AgentConfiguration.objects.get_or_create(
        slug="echo-b", defaults={"name": "Echo b", "provider": Provider.ECHO})
    key = visitor_session_key()
    return key, make_battle(key, [managed, echo], **scenario_fields)


async def open_call(battle: AgentBattle, key: str, label: str = "a"):  # noqa: ANN201
    client = communicator(battle.pk, label, key)
    connected, _ = await client.connect()
    assert connected
    heard = Heard()
    await listen_until(client, heard, lambda h: h.of("started") or h.of("session_end"))
    return client, heard


async def hang_up(client) -> None:  # noqa: ANN001
    """Leave, and wait until the proxy has saved the call whole (the provider's report
    included): nothing of it still writes when the test's database is emptied."""
    await client.disconnect(timeout=15)


def agent_listening(heard: Heard) -> bool:
    return any(e.get("state") == "listening" for e in heard.of("status"))


def answered(heard: Heard) -> bool:
    """The agent's final words came after the caller's turn."""
    finals = [e["role"] for e in heard.of("transcript") if e.get("final")]
    return "user" in finals and finals[-1] == "agent"


async def converse(battle: AgentBattle, key: str) -> tuple[Heard, AgentConversation]:
    """Call agent A: hear its greeting, say the caller's line, hear the answer, hang up."""
    client, heard = await open_call(battle, key)
    assert heard.of("started"), heard.events
    microphone = Microphone(client)
    microphone.start()
    try:
        await listen_until(client, heard, agent_listening)
        microphone.say(speech(CALLER_LINE))
        await listen_until(client, heard, answered)
        await client.send_json_to({"type": "end"})
        await listen_until(client, heard, lambda h: h.of("session_end"))
    finally:
        await microphone.stop()
        await hang_up(client)
    conversation = await database_sync_to_async(AgentConversation.objects.get)(
        battle=battle, agent_label="a")
    return heard, conversation

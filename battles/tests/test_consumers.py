"""The battle socket, driven through the real ASGI application."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings

from arena.asgi import application
from arena.steps import StepStatus
from battles import services
from battles.models import Response
from battles.tests.conftest import assert_blind
from battles.tests.factories import answered_battle
from testkit.visitors import visitor_session_key


def _session() -> str:
    return visitor_session_key()


def _communicator(battle_id, session_key: str | None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if session_key:
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={session_key}".encode()))
    return WebsocketCommunicator(application, f"/ws/battles/{battle_id}/", headers=headers)


def _assemble(messages: list[dict]) -> dict[str, str]:
    """Rebuild each answer as battle.js does: a snapshot or restart sets the text, a delta
    appends, and anything at or below the last sequence number applied is dropped."""
    texts: dict[str, str] = {}
    last_seq: dict[str, int] = {}
    for message in messages:
        rid, event = message["response"], message["event"]
        if event in ("snapshot", "restart") and message["seq"] >= last_seq.get(rid, 0):
            texts[rid] = message.get("text", "")
            last_seq[rid] = message["seq"]
        elif event == "delta" and message["seq"] > last_seq.get(rid, 0):
            texts[rid] = texts.get(rid, "") + message["text"]
            last_seq[rid] = message["seq"]
    return texts


async def _receive_until_finished(communicator, responses: int, timeout: float = 30):
    messages, finished = [], 0
    while finished < responses:
        message = await communicator.receive_json_from(timeout=timeout)
        messages.append(message)
        if message["event"] in ("done", "failed"):
            finished += 1
    return messages


@pytest.mark.django_db(transaction=True)
async def test_owner_receives_both_streams_and_nothing_names_a_model(
    celery_worker, two_models, fake_openai
):
    fake_openai.token_delay = 0.03
    session_key = await sync_to_async(_session)()
    battle, turn = await sync_to_async(services.battle_create)(
        session_key=session_key, prompt="Tell me about rivers in Europe please"
    )
    communicator = _communicator(battle.id, session_key)
    connected, _ = await communicator.connect()
    assert connected
    try:
        messages = await _receive_until_finished(communicator, responses=2)
    finally:
        await communicator.disconnect()

    for message in messages:
        assert set(message) <= {"event", "response", "position", "seq", "text", "error"}
        assert_blind(str(message), fake_openai.base_url)
    by_response = _assemble(messages)
    assert {m["position"] for m in messages if m["event"] == "done"} == {"left", "right"}
    saved = await sync_to_async(
        lambda: {str(r.id): r.text for r in Response.objects.filter(turn=turn)}
    )()
    # What streamed to the page adds up to exactly what the worker saved.
    assert by_response == saved


@pytest.mark.django_db(transaction=True)
async def test_a_stranger_cannot_listen_before_the_vote():
    battle = await sync_to_async(answered_battle)(session_key=await sync_to_async(_session)())
    communicator = _communicator(battle.id, await sync_to_async(_session)())
    connected, code = await communicator.connect()
    assert not connected and code == 4404


@pytest.mark.django_db(transaction=True)
async def test_late_joiner_gets_a_snapshot_then_only_new_chunks(celery_worker, two_models,
                                                                fake_openai):
    fake_openai.token_delay = 0.05
    session_key = await sync_to_async(_session)()
    battle, turn = await sync_to_async(services.battle_create)(
        session_key=session_key, prompt="one two three four five six seven eight nine ten"
    )
    while not await sync_to_async(
        Response.objects.filter(turn=turn, status=StepStatus.RUNNING).exists
    )():
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)  # let some chunks go by before the page connects
    communicator = _communicator(battle.id, session_key)
    await communicator.connect()
    try:
        messages = await _receive_until_finished(communicator, responses=2)
    finally:
        await communicator.disconnect()
    texts = _assemble(messages)
    assert any(m["event"] == "snapshot" and m["text"] for m in messages)
    saved = await sync_to_async(
        lambda: {str(r.id): r.text for r in Response.objects.filter(turn=turn)}
    )()
    assert texts == saved

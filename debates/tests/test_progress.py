"""Seed 004's currentRound and currentSpeaker: in the debate JSON, on the page and in the
stream, moving as the debate's steps do."""

import asyncio

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.test import Client

from arena.asgi import application
from arena.steps import StepStatus
from debates.consumers import DebateConsumer
from debates.models import DebateStatus, DebateStep, StepKind
from debates.progress import Progress, debate_progress
from debates.streams import announce_debate, debate_group
from debates.tests.debate_support import debate_row

pytestmark = pytest.mark.django_db


def step(debate, kind, round_=0, position="", status=StepStatus.DONE):
    return DebateStep.objects.create(debate=debate, kind=kind, round=round_,
                                     position=position, status=status)


def read(debate):
    data = Client().get(f"/api/debates/{debate.pk}").json()
    return data["currentRound"], data["currentSpeaker"]


def test_the_round_and_speaker_follow_the_steps():
    debate = debate_row(rounds=2)
    assert read(debate) == (0, None)  # nothing has started
    step(debate, StepKind.MODERATOR, 1)
    writing = step(debate, StepKind.TURN, 1, "pro", StepStatus.RUNNING)
    assert read(debate) == (1, "pro")
    writing.status = StepStatus.DONE
    writing.save()
    checking = step(debate, StepKind.FACT_CHECK, 1, "pro", StepStatus.PENDING)
    assert read(debate) == (1, None)  # a claim is being checked: nobody speaks
    checking.status = StepStatus.DONE
    checking.save()
    step(debate, StepKind.TURN, 1, "con", StepStatus.PENDING)
    assert read(debate) == (1, "con")
    debate.status = DebateStatus.PAUSED
    debate.save()
    assert read(debate) == (1, None)  # paused: the next speech waits


def test_after_the_last_round_the_round_stays_and_nobody_speaks():
    debate = debate_row(rounds=1)
    for position in ("pro", "con"):
        step(debate, StepKind.TURN, 1, position)
    step(debate, StepKind.JUDGE, 0, "", StepStatus.RUNNING)
    assert read(debate) == (1, None)
    debate.status = DebateStatus.COMPLETED
    debate.save()
    assert read(debate) == (1, None)
    assert debate_progress(debate_id=debate.pk) == Progress(1, None)


def test_the_page_shows_them():
    debate = debate_row(rounds=3)
    step(debate, StepKind.TURN, 2, "con", StepStatus.RUNNING)
    html = Client().get(f"/debates/{debate.pk}/").content.decode()
    assert 'data-current-round="2" data-current-speaker="con"' in html
    assert "Round 2 of 3 · <strong>CON</strong> speaking" in html


async def receive_within(layer, channel, timeout: float = 10):
    return await asyncio.wait_for(layer.receive(channel), timeout=timeout)


def test_every_announcement_carries_them(django_capture_on_commit_callbacks):
    debate = debate_row(rounds=2)
    step(debate, StepKind.TURN, 2, "pro", StepStatus.PENDING)
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(debate_group(debate.pk), channel)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            announce_debate(debate.pk, crowd=True)
        # A ceiling, not a synchronisation: the announcement is already sent on commit, and
        # a missing one fails here instead of hanging the run.
        message = async_to_sync(receive_within)(layer, channel)["message"]
    finally:
        async_to_sync(layer.group_discard)(debate_group(debate.pk), channel)
    assert message == {"event": "changed", "crowd": True, "currentRound": 2,
                       "currentSpeaker": "pro"}


def test_an_ended_debates_page_keeps_them_but_says_nothing_more():
    debate = debate_row(rounds=1)
    step(debate, StepKind.TURN, 1, "pro")
    step(debate, StepKind.TURN, 1, "con", StepStatus.RUNNING)  # its call is left to end
    debate.status = DebateStatus.CANCELLED
    debate.save()
    assert read(debate) == (1, None)
    html = Client().get(f"/debates/{debate.pk}/").content.decode()
    assert 'data-current-round="1" data-current-speaker="" data-rounds="1" hidden>' in html


@pytest.mark.django_db(transaction=True)
async def test_the_first_message_on_connecting_is_the_progress_as_of_the_join(monkeypatch):
    debate = await sync_to_async(debate_row)(rounds=2)
    await sync_to_async(step)(debate, StepKind.TURN, 1, "pro")
    # A step committed after the link is checked and before the group is joined: its
    # ``changed`` reaches nobody, so the progress sent on connecting must be read after the
    # join. Wrapping authorize is the one way to land a commit in that gap every time.
    authorize = DebateConsumer.authorize

    def authorize_then_a_step_commits(self, **route):
        allowed = authorize(self, **route)
        step(debate, StepKind.TURN, 1, "con", StepStatus.RUNNING)
        return allowed

    monkeypatch.setattr(DebateConsumer, "authorize", authorize_then_a_step_commits)
    communicator = WebsocketCommunicator(
        application, f"/ws/debates/{debate.pk}/",
        headers=[(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")])
    connected, _ = await communicator.connect()
    try:
        assert connected
        first = await communicator.receive_json_from(timeout=10)
    finally:
        await communicator.disconnect()
    assert first == {"event": "progress", "currentRound": 1, "currentSpeaker": "con"}

"""Seed 004's currentRound and currentSpeaker: in the debate JSON, on the page and in the
stream, moving as the debate's steps do."""

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.test import Client

from arena.steps import StepStatus
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


def test_every_announcement_carries_them(django_capture_on_commit_callbacks):
    debate = debate_row(rounds=2)
    step(debate, StepKind.TURN, 2, "pro", StepStatus.PENDING)
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(debate_group(debate.pk), channel)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            announce_debate(debate.pk, crowd=True)
        message = async_to_sync(layer.receive)(channel)["message"]
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

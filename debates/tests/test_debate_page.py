"""What a debate's page says of its state, its motion and a viewer's wager (no worker: the
rows are written as the steps would leave them)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from arena.steps import StepStatus
from debates import services
from debates.crowd import debate_vote, wagers_settle
from debates.models import Debate, DebateStatus, DebateStep, Topic
from debates.selectors import debate_view
from debates.tests.debate_support import debate_row
from testkit.visitors import visitor_session_key

pytestmark = pytest.mark.django_db


def _page(debate: Debate, client: Client | None = None) -> str:
    return (client or Client()).get(f"/debates/{debate.pk}/").content.decode()


def test_a_cancelled_debate_says_cancelled_not_failed_and_nothing_is_being_written():
    """It showed "Failed" in red, with the turn under way still "WRITING…"."""
    debate = debate_row(session_key="owner")
    DebateStep.objects.create(debate=debate, kind="turn", round=1, position="con",
                              status=StepStatus.RUNNING)
    services.debate_cancel(debate_id=debate.pk, session_key="owner")
    debate.refresh_from_db()
    assert debate.status == DebateStatus.CANCELLED and debate.is_finished
    page = _page(debate)
    assert 'data-testid="status">Cancelled<' in page and "status-cancelled" in page
    assert 'data-testid="writing"' not in page and "writing…" not in page.lower()
    assert "was cancelled before it could be judged" in page
    assert 'class="alert info"' in page


def test_a_proposed_motion_is_called_so_once():
    """"PROPOSED · PROPOSED MOTION"."""
    debate = debate_row()
    Topic.objects.filter(pk=debate.topic_id).update(category="Proposed", is_approved=False)
    kind = _page(debate).split('data-testid="motion-kind">', 1)[1].split("<", 1)[0]
    assert kind == "proposed motion"


@pytest.mark.parametrize(("stakes", "winner", "mine", "reason"), [
    ([("me", "pro", 200)], "pro", 200, "every stake was on PRO: there were no other stakes"),
    ([("me", "pro", 200), ("them", "con", 100)], "pro", 300, "the pool of 300 points"),
    ([("me", "con", 200), ("them", "pro", 100)], "pro", 0, "your stake joined the pool"),
    ([("me", "con", 200)], "pro", 200, "nobody called it, so every stake was given back"),
    ([("me", "con", 200)], "", 200, "There is no AI verdict"),
])
def test_a_payout_explains_itself(stakes, winner, mine, reason):
    """A sole winning bettor was "paid back 200" with no word why."""
    debate = debate_row()
    for session, choice, wager in stakes:
        debate_vote(debate_id=debate.pk, session_key=session, choice=choice, wager=wager)
    Debate.objects.filter(pk=debate.pk).update(status=DebateStatus.COMPLETED, ai_winner=winner)
    wagers_settle(debate=Debate.objects.get(pk=debate.pk))
    page = debate_view(debate=Debate.objects.get(pk=debate.pk), session_key="me")
    assert page.viewer_vote.payout == mine
    assert reason in page.payout_reason


def test_the_wager_comes_before_the_vote_buttons():
    """The wager box sat below the buttons, which vote at once."""
    page = _page(debate_row())
    form = page.split('data-testid="vote-form"', 1)[1].split("</form>", 1)[0]
    assert form.index('data-testid="wager"') < form.index('data-testid="vote-pro"')


def test_a_judge_that_gave_no_verdict_says_why_on_the_page():
    """"no verdict" rows showed no reason (it was only in a tooltip)."""
    from debates.models import JudgeEvaluation

    debate = debate_row()
    JudgeEvaluation.objects.create(debate=debate, judge=debate.model_a, role="primary",
                                   order="pro_first", winner="", attempts=3,
                                   error="The model provider did not respond in time.")
    Debate.objects.filter(pk=debate.pk).update(status=DebateStatus.COMPLETED, needs_review=True)
    page = _page(debate)
    reason = page.split('data-testid="no-verdict-reason">', 1)[1].split("<", 1)[0]
    assert reason == "The model provider did not respond in time."


def test_the_owners_controls_show_no_template_comment():
    """A comment over two lines in ``{# #}`` is no comment in Django: the owner of a debate
    under way read it above Pause and Cancel."""
    key = visitor_session_key()
    debate = debate_row(session_key=key)
    Debate.objects.filter(pk=debate.pk).update(status=DebateStatus.IN_PROGRESS)
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = key
    page = _page(debate, client)
    assert "Pause" in page and "{#" not in page and "#}" not in page

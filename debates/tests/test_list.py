"""The debate list (debates.selectors.debate_list): newest first, each line's motion,
category, pro and con personas and speech count, its filters, and blind on models."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from debates import selectors
from debates.models import CrowdVote, Debate, DebateStatus, DebateTurn

from .debate_support import debate_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def three():
    """An old debate in progress (one speech, Tester One for pro), a newer completed one
    with the sides swapped and three speeches, and an unlisted one."""
    old = debate_row(created_at=timezone.now() - timedelta(hours=2))
    new = Debate.objects.create(
        topic=old.topic, model_a=old.model_a, model_b=old.model_b, persona_a=old.persona_a,
        persona_b=old.persona_b, model_a_position="con", status=DebateStatus.COMPLETED,
        judge_model=old.judge_model, created_at=timezone.now() - timedelta(hours=1))
    for round_, position in ((1, "pro"), (1, "con"), (2, "pro")):
        DebateTurn.objects.create(debate=new, round=round_, position=position,
                                  speaker=old.model_a, speech="A speech.")
    Debate.objects.create(
        topic=old.topic, model_a=old.model_a, model_b=old.model_b, persona_a=old.persona_a,
        persona_b=old.persona_b, model_a_position="pro", is_listed=False,
        judge_model=old.judge_model)
    return old, new


def test_newest_first_with_each_lines_own_sides_and_speeches(three):
    old, new = three
    listed = selectors.debate_list()
    assert [d.pk for d in listed] == [new.pk, old.pk]  # the unlisted one is not there
    assert [(d.pro, d.con, d.turn_count) for d in listed] == [
        ("Tester Two", "Tester One", 3), ("Tester One", "Tester Two", 1)]
    assert listed[0].motion == old.topic.motion and listed[0].category == "Environment"
    assert listed[0].status == "completed" and listed[0].get_status_display() == "Completed"
    assert listed[0].created_at == new.created_at


def test_filters(three):
    old, new = three
    assert [d.pk for d in selectors.debate_list(category="environment")] == [new.pk, old.pk]
    assert selectors.debate_list(category="Philosophy") == []
    assert [d.pk for d in selectors.debate_list(status="in_progress")] == [old.pk]
    assert [d.pk for d in selectors.debate_list(limit=1)] == [new.pk]


def test_a_model_filter_finds_only_debates_the_viewer_voted_on(three):
    old, new = three
    assert selectors.debate_list(model=old.model_a_id, session_key="viewer") == []
    assert selectors.debate_list(model=old.model_a_id) == []  # no session: nothing
    CrowdVote.objects.create(debate=old, session_key="viewer", choice="tie")
    assert [d.pk for d in selectors.debate_list(model=old.model_b_id,
                                                session_key="viewer")] == [old.pk]
    assert selectors.debate_list(model="someone-else", session_key="viewer") == []


def test_the_page_shows_pro_against_con(three):
    page = Client().get("/debates/").content.decode()
    assert page.index("Tester Two vs Tester One") < page.index("Tester One vs Tester Two")

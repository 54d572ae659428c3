"""Vote integrity in text battles: the daily cap on counted votes (per session and per
address), the sweep that stops counting a flagged visitor's votes (kept and marked), the
staff review list, and a cleared flag that makes them count again."""

from __future__ import annotations

import pytest
from django.test import Client

from arena.contests.flags import OVER_DAILY_CAP, visitor_of_address
from arena.models import FlagStatus, VisitorFlag
from battles.integrity import COUNTED_VOTES
from battles.models import Vote
from battles.tests.factories import AIModelFactory, answered_battle, vote_on

pytestmark = pytest.mark.django_db


@pytest.fixture
def models():
    return [AIModelFactory() for _ in range(4)]


def voted(models, *, session_key: str, choice: str, voter: str = "", index: int = 0) -> Vote:
    a, b = models[index % len(models)], models[(index + 1) % len(models)]
    battle = answered_battle(session_key=session_key, model_a=a, model_b=b)
    return vote_on(battle, choice=choice, voter=voter)


def test_votes_past_the_daily_cap_are_kept_but_do_not_count(models, settings):
    settings.ARENA_COUNTED_VOTES_PER_DAY = 3
    votes = [voted(models, session_key="busy", choice="tie", index=i) for i in range(4)]
    assert [v.counts_for_rating for v in votes] == [True, True, True, False]
    assert votes[-1].exclusion_reason == OVER_DAILY_CAP.format(cap=3)
    assert voted(models, session_key="someone-else", choice="tie").counts_for_rating


def test_the_cap_follows_an_address_across_new_sessions(models, settings):
    settings.ARENA_COUNTED_VOTES_PER_DAY = 2
    settings.ARENA_RATE_LIMIT_IP_MULTIPLIER = 2
    address = visitor_of_address("203.0.113.5")
    votes = [voted(models, session_key=f"fresh-{i}", choice="tie", voter=address, index=i)
             for i in range(5)]
    assert [v.counts_for_rating for v in votes] == [True, True, True, True, False]
    assert address.startswith("ip:") and "203.0.113.5" not in address


def test_a_side_clicker_is_flagged_and_their_votes_stop_counting(models, settings):
    settings.ARENA_INTEGRITY_MIN_VOTES = 20
    clicker = [voted(models, session_key="clicker", choice="left_better", index=i)
               for i in range(22)]
    honest = [voted(models, session_key="honest", index=i,
                    choice=["left_better", "right_better", "tie"][i % 3]) for i in range(22)]
    assert COUNTED_VOTES.sweep() == {"flagged": 1, "votes_marked": 22}
    flag = VisitorFlag.objects.get()
    assert flag.visitor == "session:clicker" and flag.status == FlagStatus.FLAGGED
    assert "same side: left in 22 of 22" in flag.reason
    for vote in clicker:
        vote.refresh_from_db()
        assert not vote.counts_for_rating
        assert vote.exclusion_reason.startswith("visitor flagged: same side")
    assert all(Vote.objects.get(pk=v.pk).counts_for_rating for v in honest)
    assert COUNTED_VOTES.sweep() == {"flagged": 0, "votes_marked": 0}  # nothing twice


def test_staff_review_the_flags_and_a_cleared_flag_counts_again(models, settings,
                                                               admin_client: Client):
    settings.ARENA_INTEGRITY_MIN_VOTES = 20
    for i in range(21):
        voted(models, session_key="clicker", choice="right_better", index=i)
    COUNTED_VOTES.sweep()
    flag = VisitorFlag.objects.get()
    listing = admin_client.get("/admin/arena/visitorflag/").content.decode()
    assert "session:clicker" in listing and "same side: right in 21 of 21" in listing
    response = admin_client.post("/admin/arena/visitorflag/", {
        "action": "clear", "_selected_action": [flag.pk]})
    assert response.status_code == 302
    flag.refresh_from_db()
    assert flag.status == FlagStatus.CLEARED and flag.reviewed_by == "admin"
    assert Vote.objects.filter(counts_for_rating=True).count() == 21
    assert COUNTED_VOTES.sweep()["votes_marked"] == 0  # a cleared visitor stays cleared


def test_the_sweep_runs_on_a_schedule():
    from arena.celery import app
    from arena.tasks import votes_integrity_sweep

    entry = app.conf.beat_schedule["arena-votes-integrity-sweep"]
    assert entry["task"] == "arena.tasks.votes_integrity_sweep"
    assert set(votes_integrity_sweep()) >= {"battles", "debates", "agents"}


def test_the_api_records_the_voters_address_only_as_a_keyed_hash(models, settings):
    battle = answered_battle(session_key="", model_a=models[0], model_b=models[1])
    client = Client(REMOTE_ADDR="198.51.100.23")
    client.get("/battle/")  # no session yet: the vote below needs the battle's owner
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store.create()
    battle.session_key = store.session_key
    battle.save(update_fields=["session_key"])
    client.cookies[settings.SESSION_COOKIE_NAME] = store.session_key
    response = client.post(f"/api/battles/{battle.id}/vote", {"vote": "tie"},
                           content_type="application/json")
    assert response.status_code == 200, response.content
    vote = Vote.objects.get(battle=battle)
    assert vote.voter == visitor_of_address("198.51.100.23")

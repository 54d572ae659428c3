"""The admin: accounts with their votes per mode, flags and bans, the bans of anonymous
sessions, and the review list of suspicious voters across modes."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import Profile
from accounts.tests.support import person
from arena.contests.bans import VOTER_BANNED
from arena.models import FlagStatus, VisitorFlag, VoterBan
from battles.models import Vote
from battles.tests.factories import vote_on
from debates.crowd import debate_vote
from debates.models import CrowdVote
from releases.tests.support import finished_debate, text_battle
from testkit.ratings import quiet_rating_runs

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_debounced_runs(monkeypatch):
    quiet_rating_runs(monkeypatch)


def voted_account(email: str = "ada@example.com") -> Profile:
    """A person who voted on two text battles and one debate."""
    profile = Profile.objects.create(user=person(email))
    for _ in range(2):
        vote_on(text_battle(profile.visitor_key), choice="left_better")
    debate_vote(debate_id=finished_debate().pk, session_key=profile.visitor_key, choice="pro")
    return profile


def test_the_accounts_list_shows_votes_per_mode_flags_and_bans(staff):
    voted_account()
    page = staff.get("/admin/accounts/profile/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "ada@example.com" in text
    assert "battles votes" in text.lower() and "debates votes" in text.lower()
    assert '<td class="field-votes_battles">2 / 2</td>' in text
    assert '<td class="field-votes_debates">1 / 1</td>' in text
    assert "Suspicious voters" in text
    assert staff.get("/admin/accounts/profile/?banned__exact=1").content.count(
        b"ada@example.com") == 0


def test_staff_flag_then_ban_an_account_and_lift_the_ban(staff):
    profile = voted_account()
    url = "/admin/accounts/profile/"
    staff.post(url, {"action": "flag", "_selected_action": [profile.pk]})
    profile.refresh_from_db()
    assert profile.flagged and not profile.banned
    assert Vote.objects.filter(counts_for_rating=True).count() == 2  # flagged: still count

    answer = staff.post(url, {"action": "ban", "_selected_action": [profile.pk]}, follow=True)
    assert b"stop counting at the next rating run" in answer.content
    profile.refresh_from_db()
    assert profile.banned
    assert set(Vote.objects.values_list("counts_for_rating", "exclusion_reason")) == {
        (False, VOTER_BANNED)}
    assert not CrowdVote.objects.filter(counts_for_rating=True).exists()
    assert b'<td class="field-votes_battles">0 / 2</td>' in staff.get(url).content

    answer = staff.post(url, {"action": "unban", "_selected_action": [profile.pk]}, follow=True)
    assert b"3 vote(s) count again" in answer.content
    profile.refresh_from_db()
    assert not profile.banned
    assert Vote.objects.filter(counts_for_rating=True).count() == 2


def test_staff_ban_an_anonymous_session_by_its_key(staff):
    key = "an-anonymous-session-key"
    vote = vote_on(text_battle(key), choice="left_better")
    answer = staff.post("/admin/arena/voterban/add/",
                        {"visitor": f"session:{key}", "reason": "vote ring"})
    assert answer.status_code == 302, answer.content[:800]
    vote.refresh_from_db()
    assert (vote.counts_for_rating, vote.exclusion_reason) == (False, VOTER_BANNED)
    ban = VoterBan.objects.get()
    assert (ban.banned_by, ban.reason) == ("root", "vote ring")
    # Lifted, then banned again from the same form: the same row stands again.
    staff.post("/admin/arena/voterban/", {"action": "lift", "_selected_action": [ban.pk]})
    vote.refresh_from_db()
    assert vote.counts_for_rating
    answer = staff.post("/admin/arena/voterban/add/", {"visitor": f"session:{key}"})
    assert answer.status_code == 302
    assert VoterBan.objects.get().stands


def test_a_ban_must_name_a_session_or_an_address(staff):
    answer = staff.post("/admin/arena/voterban/add/", {"visitor": "somebody"})
    assert answer.status_code == 200
    assert b"session:&lt;key&gt; or ip:&lt;hash&gt;" in answer.content
    assert not VoterBan.objects.exists()


def test_the_review_list_shows_flagged_voters_across_modes_and_bans_them(staff):
    profile = voted_account()
    account = f"session:{profile.visitor_key}"
    VisitorFlag.objects.create(mode="battles", visitor=account,
                               reason="same side: left in 40 of 40 decisive votes")
    VisitorFlag.objects.create(mode="debates", visitor=account, reason="burst: 45 votes")
    VisitorFlag.objects.create(mode="battles", visitor="ip:abcdef0123456789abcdef01",
                               reason="burst: 90 votes within 120 s")
    VisitorFlag.objects.create(mode="battles", visitor="session:cleared-one", reason="x",
                               status=FlagStatus.CLEARED)
    page = staff.get("/admin/accounts/profile/suspicious/")
    assert page.status_code == 200
    text = page.content.decode()
    assert text.count('data-testid="suspicious-voter"') == 2  # the cleared one is not listed
    assert "ada@example.com" in text and "account" in text and "address" in text
    assert "battles: same side: left in 40 of 40" in text and "debates: burst: 45 votes" in text
    assert "<td>2 / 2</td>" in text and "<td>1 / 1</td>" in text  # battles, debates

    staff.post("/admin/accounts/profile/suspicious/ban/", {"visitor": account})
    profile.refresh_from_db()
    assert profile.banned  # the account, not only its key
    assert "<td>0 / 2</td>" in staff.get("/admin/accounts/profile/suspicious/").content.decode()
    staff.post("/admin/accounts/profile/suspicious/ban/", {"visitor": account, "lift": "1"})
    profile.refresh_from_db()
    assert not profile.banned


def test_the_review_list_and_its_ban_are_staff_only():
    plain = Client()
    plain.force_login(person("bob@example.com"))
    assert plain.get("/admin/accounts/profile/suspicious/").status_code == 302
    plain.post("/admin/accounts/profile/suspicious/ban/", {"visitor": "session:abc"})
    assert not VoterBan.objects.exists()

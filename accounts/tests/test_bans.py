"""Staff ban a person or an anonymous session: their votes, in every mode, are kept but stop
counting at the next rating run; lifting the ban counts them again."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.bans import account_ban, account_unban, ban, unban
from accounts.models import Profile
from accounts.tests.support import person
from agents.models import AgentVote
from agents.services import agent_battle_vote
from arena.contests.bans import VOTER_BANNED, bans_apply, visitor_of_key, voter_ban, voter_unban
from arena.contests.flags import FLAGGED_PREFIX
from arena.models import FlagStatus, VisitorFlag, VoterBan
from battles.models import Battle, Vote
from battles.tests.factories import vote_on
from debates.crowd import debate_vote
from debates.models import CrowdVote
from leaderboard.models import BoardSnapshot, RunTrigger
from leaderboard.runs.services import ratings_run
from leaderboard.tests.factories import make_votes
from releases.tests.support import finished_debate, talked_voice_battle, text_battle
from testkit.ratings import quiet_rating_runs

pytestmark = pytest.mark.django_db

# An honest crowd's votes, and one person's 40 votes for "shill" (they decide its rating).
CROWD = [("alpha", "beta", "model_a", 12), ("beta", "gamma", "model_a", 10),
         ("gamma", "alpha", "model_b", 8), ("shill", "alpha", "model_b", 4),
         ("shill", "beta", "model_b", 4)]
SHILL = [("shill", "alpha", "model_a", 20), ("shill", "gamma", "model_a", 20)]


@pytest.fixture(autouse=True)
def _no_debounced_runs(monkeypatch):
    quiet_rating_runs(monkeypatch)


def board() -> dict:
    """The text board's latest snapshot: {model: (rating, votes)}."""
    snapshot = (BoardSnapshot.objects.filter(board="text", category="")
                .order_by("-created_at", "-pk").first())
    return {e.subject: (e.rating, e.votes) for e in snapshot.entries.all()}


def public_order() -> list[str]:
    """The models as the public board ranks them (``GET /api/leaderboard``), best first."""
    return [e["model_id"] for e in Client().get("/api/leaderboard").json()["leaderboard"]]


def votes_of(key: str, rows) -> list:
    """``rows`` as votes cast under ``key`` (a session's or an account's)."""
    before = set(Vote.objects.values_list("pk", flat=True))
    make_votes(rows)
    new = Vote.objects.exclude(pk__in=before)
    Battle.objects.filter(vote__in=new).update(session_key=key)
    new.update(session_key=key)
    return list(new.values_list("pk", flat=True))


def run() -> None:
    done = ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    assert done.error == ""


def test_a_banned_persons_votes_leave_the_board_at_the_next_run_and_return_when_lifted():
    profile = Profile.objects.create(user=person())
    make_votes(CROWD)
    theirs = votes_of(profile.visitor_key, SHILL)
    run()
    shill_before = board()["shill"]
    assert shill_before[1] == 48
    assert public_order()[0] == "shill"

    account_ban(profile=profile, by="staff")

    profile.refresh_from_db()
    assert profile.banned and profile.banned_at is not None
    kept = Vote.objects.filter(pk__in=theirs)
    assert kept.count() == 40  # kept, marked
    assert set(kept.values_list("counts_for_rating", "exclusion_reason")) == {
        (False, VOTER_BANNED)}
    assert board()["shill"] == shill_before  # the board moves at the next run, not before
    run()
    shill_banned = board()["shill"]
    assert shill_banned[1] == 8
    assert shill_banned[0] < shill_before[0] - 100
    assert public_order()[0] != "shill"  # no longer at the top of the public board
    assert public_order().index("shill") > public_order().index("beta")

    assert account_unban(profile=profile, by="staff") == 40
    run()
    assert board()["shill"] == pytest.approx(shill_before)
    assert public_order()[0] == "shill"
    profile.refresh_from_db()
    assert not profile.banned


def test_votes_that_reach_a_banned_key_after_the_ban_stop_counting_at_the_next_run():
    """A sign-in moving rows to a banned account, or a vote racing the ban."""
    make_votes(CROWD)
    voter_ban(visitor="session:late-key", by="staff")
    late = votes_of("late-key", SHILL)  # counted, as if moved here after the ban
    assert Vote.objects.filter(pk__in=late, counts_for_rating=True).count() == 40
    run()
    assert not Vote.objects.filter(pk__in=late, counts_for_rating=True).exists()
    assert board()["shill"][1] == 8


def test_a_banned_voter_votes_in_every_mode_recorded_but_not_counted():
    key = "banned-anonymous-session"
    ban(visitor=visitor_of_key(key), by="staff", reason="vote ring")
    battle_vote = vote_on(text_battle(key), choice="left_better")
    crowd_vote = debate_vote(debate_id=finished_debate().pk, session_key=key, choice="pro")
    voice = talked_voice_battle(key)
    voice_vote = agent_battle_vote(battle_id=voice.pk, session_key=key, overall="a")
    for vote in (battle_vote, crowd_vote, voice_vote):
        vote.refresh_from_db()
        assert (vote.counts_for_rating, vote.exclusion_reason) == (False, VOTER_BANNED)

    assert unban(visitor=visitor_of_key(key), by="staff") == 3
    assert all(model.objects.get(pk=vote.pk).counts_for_rating for model, vote in (
        (Vote, battle_vote), (CrowdVote, crowd_vote), (AgentVote, voice_vote)))


def test_an_address_ban_keeps_the_votes_out_when_the_sessions_ban_is_lifted():
    key, address = "two-bans", "ip:0123456789abcdef01234567"
    theirs = votes_of(key, SHILL)
    Vote.objects.filter(pk__in=theirs).update(voter=address)
    voter_ban(visitor=f"session:{key}", by="staff")
    voter_ban(visitor=address, by="staff")
    assert voter_unban(visitor=f"session:{key}", by="staff") == 0
    assert not Vote.objects.filter(pk__in=theirs, counts_for_rating=True).exists()
    assert voter_unban(visitor=address, by="staff") == 40


def test_lifting_a_ban_leaves_a_flagged_voters_votes_out_under_the_flags_reason():
    key = "flagged-and-banned"
    theirs = votes_of(key, SHILL)
    voter_ban(visitor=f"session:{key}", by="staff")
    VisitorFlag.objects.create(mode="battles", visitor=f"session:{key}", reason="same side",
                               status=FlagStatus.FLAGGED)
    assert voter_unban(visitor=f"session:{key}", by="staff") == 0
    reasons = set(Vote.objects.filter(pk__in=theirs)
                  .values_list("counts_for_rating", "exclusion_reason"))
    assert reasons == {(False, FLAGGED_PREFIX + "same side")}


def test_banning_twice_and_applying_again_change_nothing():
    key = "twice"
    votes_of(key, SHILL)
    voter_ban(visitor=f"session:{key}", by="a")
    voter_ban(visitor=f"session:{key}", by="b")
    assert VoterBan.objects.filter(visitor=f"session:{key}").count() == 1
    assert bans_apply() == 0


def test_a_ban_names_a_session_or_an_address():
    with pytest.raises(ValueError, match="session:<key>"):
        voter_ban(visitor="someone", by="staff")

"""Crowd votes, the reveal, wagers and the parimutuel payout."""

import random

import pytest

from arena.errors import RuleError
from debates.crowd import crowd_reveal, crowd_vote, majority, parimutuel, points_of
from debates.models import CrowdVote, DebateStatus, DebateStep, PointsAccount, StepKind
from debates.verdicts import debate_settle


class TestParimutuel:
    def test_the_pool_goes_to_the_winners_by_stake(self):
        payouts = parimutuel([("a", "pro", 100), ("b", "pro", 300), ("c", "con", 400)], "pro")
        assert payouts == {"a": 200, "b": 600, "c": 0}

    def test_nobody_called_it_and_everyone_gets_the_stake_back(self):
        assert parimutuel([("a", "pro", 10), ("b", "con", 20)], "tie") == {"a": 10, "b": 20}

    def test_remainders_go_to_the_largest_fractions_and_points_are_conserved(self):
        payouts = parimutuel([("a", "pro", 1), ("b", "pro", 1), ("c", "pro", 1),
                              ("d", "con", 1)], "pro")
        assert sum(payouts.values()) == 4 and sorted(payouts.values()) == [0, 1, 1, 2]

    @pytest.mark.parametrize("seed", range(20))
    def test_any_book_conserves_points(self, seed):
        rng = random.Random(seed)
        stakes = [(i, rng.choice(["pro", "con", "tie"]), rng.randint(0, 997))
                  for i in range(rng.randint(1, 30))]
        winner = rng.choice(["pro", "con", "tie"])
        payouts = parimutuel(stakes, winner)
        assert sum(payouts.values()) == sum(s for _, _, s in stakes)
        assert all(payouts[k] == 0 for k, c, s in stakes if c != winner and any(
            c2 == winner and s2 for _, c2, s2 in stakes))


def test_majority():
    assert majority({"pro": 0, "con": 0, "tie": 0}) == ""
    assert majority({"pro": 3, "con": 1, "tie": 0}) == "pro"
    assert majority({"pro": 2, "con": 2, "tie": 1}) == "tie"
    assert majority({"pro": 1, "con": 2, "tie": 3}) == "tie"


@pytest.fixture
def voted_debate(db):
    from debates.tests.debate_support import debate_row

    return debate_row()


class TestVotes:
    def test_one_vote_per_session_and_the_second_is_a_409(self, voted_debate):
        crowd_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro")
        with pytest.raises(RuleError) as raised:
            crowd_vote(debate_id=voted_debate.pk, session_key="s1", choice="con")
        assert raised.value.status == 409
        assert CrowdVote.objects.filter(debate=voted_debate).count() == 1

    def test_revealing_forfeits_the_vote(self, voted_debate):
        crowd_reveal(debate_id=voted_debate.pk, session_key="s1")
        with pytest.raises(RuleError) as raised:
            crowd_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro")
        assert raised.value.status == 409 and "revealed" in raised.value.message

    def test_bad_choices_and_wagers(self, voted_debate):
        for choice, wager in (("left", 0), ("pro", -5), ("pro", 1001)):
            with pytest.raises(RuleError) as raised:
                crowd_vote(debate_id=voted_debate.pk, session_key="s1", choice=choice,
                           wager=wager)
            assert raised.value.status == 422
        assert not CrowdVote.objects.exists() and points_of("s1") == 1000

    def test_the_majority_follows_the_votes(self, voted_debate):
        for key, choice in (("s1", "con"), ("s2", "con"), ("s3", "pro")):
            crowd_vote(debate_id=voted_debate.pk, session_key=key, choice=choice)
        voted_debate.refresh_from_db()
        assert voted_debate.human_winner == "con"
        assert voted_debate.crowd_outcome == voted_debate.outcome_of("con")

    def test_wagers_close_when_judging_starts(self, voted_debate):
        DebateStep.objects.create(debate=voted_debate, kind=StepKind.JUDGE)
        with pytest.raises(RuleError) as raised:
            crowd_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro", wager=10)
        assert raised.value.status == 409
        crowd_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro")  # no wager: fine

    def test_a_failed_debate_takes_no_votes(self, voted_debate):
        voted_debate.status = DebateStatus.FAILED
        voted_debate.save()
        with pytest.raises(RuleError) as raised:
            crowd_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro")
        assert raised.value.status == 409


def test_wagers_are_paid_on_the_verdict_once_and_points_are_conserved(voted_debate):
    stakes = {"s1": ("pro", 100), "s2": ("pro", 300), "s3": ("con", 400), "s4": ("tie", 0)}
    for key, (choice, wager) in stakes.items():
        crowd_vote(debate_id=voted_debate.pk, session_key=key, choice=choice, wager=wager)
    assert points_of("s1") == 900 and points_of("s3") == 600
    total_before = sum(points_of(k) for k in stakes) + sum(w for _, w in stakes.values())
    debate_settle(debate=voted_debate, winner="pro")
    debate_settle(debate=voted_debate, winner="pro")  # a second settlement pays nothing more
    assert [points_of(k) for k in stakes] == [1100, 1300, 600, 1000]
    assert sum(points_of(k) for k in stakes) == total_before
    assert dict(CrowdVote.objects.values_list("session_key", "payout")) == {
        "s1": 200, "s2": 600, "s3": 0, "s4": None}
    assert PointsAccount.objects.count() == 3  # s4 never wagered: no account was needed

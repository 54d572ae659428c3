"""Crowd votes, the reveal, wagers and the parimutuel payout."""

import random

import pytest

from arena.errors import RuleError
from debates.crowd import crowd_reveal, debate_vote, parimutuel, points_of
from debates.majority import crowd_tally, majority
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
        debate_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro")
        with pytest.raises(RuleError) as raised:
            debate_vote(debate_id=voted_debate.pk, session_key="s1", choice="con")
        assert raised.value.status == 409
        assert CrowdVote.objects.filter(debate=voted_debate).count() == 1

    def test_revealing_forfeits_the_vote(self, voted_debate):
        crowd_reveal(debate_id=voted_debate.pk, session_key="s1")
        with pytest.raises(RuleError) as raised:
            debate_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro")
        assert raised.value.status == 409 and "revealed" in raised.value.message

    def test_bad_choices_and_wagers(self, voted_debate):
        for choice, wager in (("left", 0), ("pro", -5), ("pro", 1001)):
            with pytest.raises(RuleError) as raised:
                debate_vote(debate_id=voted_debate.pk, session_key="s1", choice=choice,
                           wager=wager)
            assert raised.value.status == 422
        assert not CrowdVote.objects.exists() and points_of("s1") == 1000

    def test_the_majority_follows_the_votes(self, voted_debate):
        for key, choice in (("s1", "con"), ("s2", "con"), ("s3", "pro")):
            debate_vote(debate_id=voted_debate.pk, session_key=key, choice=choice)
        voted_debate.refresh_from_db()
        assert voted_debate.human_winner == "con"
        assert voted_debate.crowd_outcome == voted_debate.outcome_of("con")

    def test_wagers_close_when_judging_starts(self, voted_debate):
        DebateStep.objects.create(debate=voted_debate, kind=StepKind.JUDGE)
        with pytest.raises(RuleError) as raised:
            debate_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro", wager=10)
        assert raised.value.status == 409
        debate_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro")  # no wager: fine

    def test_a_failed_debate_takes_no_votes(self, voted_debate):
        voted_debate.status = DebateStatus.FAILED
        voted_debate.save()
        with pytest.raises(RuleError) as raised:
            debate_vote(debate_id=voted_debate.pk, session_key="s1", choice="pro")
        assert raised.value.status == 409


def test_wagers_are_paid_on_the_verdict_once_and_points_are_conserved(voted_debate):
    stakes = {"s1": ("pro", 100), "s2": ("pro", 300), "s3": ("con", 400), "s4": ("tie", 0)}
    for key, (choice, wager) in stakes.items():
        debate_vote(debate_id=voted_debate.pk, session_key=key, choice=choice, wager=wager)
    assert points_of("s1") == 900 and points_of("s3") == 600
    total_before = sum(points_of(k) for k in stakes) + sum(w for _, w in stakes.values())
    debate_settle(debate=voted_debate, winner="pro")
    debate_settle(debate=voted_debate, winner="pro")  # a second settlement pays nothing more
    assert [points_of(k) for k in stakes] == [1100, 1300, 600, 1000]
    assert sum(points_of(k) for k in stakes) == total_before
    assert dict(CrowdVote.objects.values_list("session_key", "payout")) == {
        "s1": 200, "s2": 600, "s3": 0, "s4": None}
    assert PointsAccount.objects.count() == 3  # s4 never wagered: no account was needed


class TestIntegrity:
    """The platform's vote-integrity rules on crowd votes: the daily cap, flagged visitors
    whose votes stop counting (the majority moves), and a cleared flag."""

    @staticmethod
    def debates(first, n: int) -> list:
        from debates.models import Debate, DebateTurn

        made = [first]
        for _ in range(n - 1):
            debate = Debate.objects.create(
                topic=first.topic, model_a=first.model_a, model_b=first.model_b,
                persona_a=first.persona_a, persona_b=first.persona_b,
                model_a_position="pro", status=DebateStatus.IN_PROGRESS,
                judge_model=first.judge_model)
            DebateTurn.objects.create(debate=debate, round=1, position="pro",
                                      speaker=first.model_a, speech="An opening.")
            made.append(debate)
        return made

    def test_votes_past_the_daily_cap_are_kept_but_do_not_move_the_majority(
            self, voted_debate, settings):
        from arena.contests.flags import OVER_DAILY_CAP

        settings.ARENA_COUNTED_VOTES_PER_DAY = 2
        debates = self.debates(voted_debate, 3)
        votes = [debate_vote(debate_id=d.pk, session_key="busy", choice="con") for d in debates]
        assert [v.counts_for_rating for v in votes] == [True, True, False]
        assert votes[-1].exclusion_reason == OVER_DAILY_CAP.format(cap=2)
        debates[2].refresh_from_db()
        assert debates[2].human_winner == "" and debates[2].crowd_outcome == ""
        assert crowd_tally(debates[2]) == {"pro": 0, "con": 0, "tie": 0}
        assert debate_vote(debate_id=debates[2].pk, session_key="other",
                          choice="pro").counts_for_rating

    def test_the_cap_follows_an_address_and_a_reveal_never_counts(self, voted_debate, settings):
        from arena.contests.flags import visitor_of_address

        settings.ARENA_COUNTED_VOTES_PER_DAY = 1
        settings.ARENA_RATE_LIMIT_IP_MULTIPLIER = 2
        debates = self.debates(voted_debate, 4)
        reveal = crowd_reveal(debate_id=debates[0].pk, session_key="peek")
        assert not reveal.counts_for_rating
        address = visitor_of_address("203.0.113.9")
        votes = [debate_vote(debate_id=d.pk, session_key=f"fresh-{i}", choice="tie",
                            voter=address) for i, d in enumerate(debates[1:])]
        assert [v.counts_for_rating for v in votes] == [True, True, False]

    def test_a_flagged_visitors_votes_stop_counting_and_count_again_when_cleared(
            self, voted_debate, settings):
        from arena.contests.flags import flag_review
        from arena.models import FlagStatus, VisitorFlag
        from debates.integrity import COUNTED_VOTES

        settings.ARENA_INTEGRITY_MIN_VOTES = 20
        debates = self.debates(voted_debate, 21)
        for d in debates:
            debate_vote(debate_id=d.pk, session_key="pro-clicker", choice="pro")
        debate_vote(debate_id=debates[0].pk, session_key="honest-1", choice="con")
        debates[0].refresh_from_db()
        assert debates[0].human_winner == "tie"  # one each
        assert COUNTED_VOTES.sweep() == {"flagged": 1, "votes_marked": 21}
        flag = VisitorFlag.objects.get(mode="debates")
        assert flag.visitor == "session:pro-clicker" and "same side: pro in 21 of 21" in flag.reason
        assert not CrowdVote.objects.filter(session_key="pro-clicker",
                                            counts_for_rating=True).exists()
        debates[0].refresh_from_db()
        debates[1].refresh_from_db()
        assert debates[0].human_winner == "con"  # only the honest vote counts now
        assert debates[1].human_winner == "" and debates[1].crowd_outcome == ""
        assert COUNTED_VOTES.sweep() == {"flagged": 0, "votes_marked": 0}  # nothing twice
        flag_review(flag, status=FlagStatus.CLEARED, by="staff")
        debates[1].refresh_from_db()
        assert debates[1].human_winner == "pro"
        assert CrowdVote.objects.filter(session_key="pro-clicker",
                                        counts_for_rating=True).count() == 21

    def test_the_page_records_the_voters_address_only_as_a_keyed_hash(self, voted_debate):
        from django.test import Client

        from arena.contests.flags import visitor_of_address

        client = Client(REMOTE_ADDR="198.51.100.77")
        response = client.post(f"/debates/{voted_debate.pk}/vote/", {"choice": "pro"})
        assert response.status_code in (200, 302), response.content
        vote = CrowdVote.objects.get(debate=voted_debate)
        assert vote.voter == visitor_of_address("198.51.100.77")
        assert "198.51.100.77" not in vote.voter

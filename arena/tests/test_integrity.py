"""The vote-integrity tests on their own: honest voting passes, a side-clicker, a model
stuffer and a burst are each caught, and each reason says what was found."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from arena.contests.integrity import (
    CastVote,
    Thresholds,
    densest_burst,
    findings,
    model_win_rates,
    same_side_p,
)

START = datetime(2026, 11, 1, 12, 0)
MODELS = ["m1", "m2", "m3", "m4"]


def honest(n: int, rng: random.Random, gap: float = 60.0) -> list[CastVote]:
    votes = []
    for i in range(n):
        a, b = rng.sample(MODELS, 2)
        side = rng.choice(["left", "right", None])
        winner, loser = ((a, b) if rng.random() < 0.5 else (b, a)) if side else (None, None)
        votes.append(CastVote(side, winner, loser, START + timedelta(seconds=gap * i)))
    return votes


@pytest.mark.parametrize(("picks", "expected"), [
    (["left"] * 10, 2 * 0.5 ** 10),
    (["left", "right"] * 10, 1.0),
    ([], 1.0),
])
def test_same_side_p_is_the_two_sided_binomial_tail(picks, expected):
    assert same_side_p(picks) == pytest.approx(expected)


def test_honest_visitors_are_not_flagged():
    rng = random.Random(7)
    everyone = [honest(60, rng) for _ in range(200)]
    rates = model_win_rates(v for votes in everyone for v in votes)
    assert sum(bool(findings(votes, rates)) for votes in everyone) == 0


def test_a_visitor_who_always_picks_left_is_flagged_with_the_reason():
    rng = random.Random(1)
    votes = [CastVote("left", *rng.sample(MODELS, 2), START + timedelta(minutes=i))
             for i in range(25)]
    found = findings(votes, model_win_rates(honest(500, rng)))
    assert [f.reason.split(":")[0] for f in found] == ["same side"]
    assert "left in 25 of 25 decisive votes" in found[0].reason and found[0].p_value < 1e-6


def test_a_visitor_who_always_favours_one_model_is_flagged():
    rng = random.Random(2)
    votes = []
    for i in range(30):
        other = rng.choice(MODELS[1:])
        votes.append(CastVote(rng.choice(["left", "right"]), "m1", other,
                              START + timedelta(minutes=i)))
    found = findings(votes, model_win_rates(honest(2000, rng)))
    assert [f.reason.split(":")[0] for f in found] == ["same model"]
    assert "m1 favoured in 30 votes" in found[0].reason


def test_a_burst_is_flagged_below_the_vote_count_of_the_binomial_tests():
    rng = random.Random(3)
    votes = honest(12, rng, gap=2.0)
    limits = Thresholds(burst_votes=10, burst_window=timedelta(seconds=60))
    assert densest_burst([v.at for v in votes], limits.burst_window) == 12
    assert [f.reason for f in findings(votes, {}, limits)] == ["burst: 12 votes within 60 s"]
    assert findings(honest(12, rng, gap=10.0), {}, limits) == []  # 6 a minute: a reader

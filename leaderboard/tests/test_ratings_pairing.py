"""Pair probabilities: uniform, fewer votes, informative (with its floor and cap)."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.ratings.pairing import (
    CAP,
    FLOOR,
    draw_pair,
    fewer_votes_pairs,
    informative_pairs,
    partner_pairs,
    uniform_pairs,
)


def _upper_sum(p: np.ndarray) -> float:
    return float(np.triu(p, 1).sum())


@pytest.mark.parametrize("probs", [
    uniform_pairs(5),
    fewer_votes_pairs(np.array([0, 10, 100, 1000, 5])),
    informative_pairs(np.array([1000, 1010, 1200, 800, 1005.0]), np.array([50, 10, 10, 80, 5.0])),
])
def test_every_strategy_is_a_distribution_over_pairs(probs):
    assert _upper_sum(probs) == pytest.approx(1.0)
    assert np.allclose(probs, probs.T) and np.all(np.diag(probs) == 0) and np.all(probs >= 0)


def test_informative_prefers_close_uncertain_pairs_and_keeps_a_floor():
    rating = np.array([1000.0, 1005.0, 1400.0, 600.0])
    se = np.array([60.0, 60.0, 10.0, 10.0])
    p = informative_pairs(rating, se)
    assert p[0, 1] == p.max()  # close ratings, wide intervals
    uniform_share = 1 / 6
    assert p[2, 3] >= FLOOR * uniform_share * 0.999  # far apart and sure, but still possible


def test_no_model_is_shown_more_than_the_cap_allows():
    n = 12
    rating = np.full(n, 1000.0)
    se = np.full(n, 5.0)
    se[0] = 300.0  # one very uncertain model would take almost every battle uncapped
    p = informative_pairs(rating, se)
    share = p.sum(axis=1)
    assert share[0] <= CAP * 2 / n * (1 + 1e-4)
    assert share[0] == pytest.approx(CAP * 2 / n, rel=0.05)  # still shown the most


def test_draws_follow_the_probabilities():
    p = fewer_votes_pairs(np.array([0, 0, 10_000]))
    rng = np.random.default_rng(0)
    pairs = [draw_pair(p, rng) for _ in range(2000)]
    assert pairs.count((0, 1)) / 2000 == pytest.approx(p[0, 1], abs=0.03)
    assert all(i < j for i, j in pairs)


def test_partner_pairs_draw_a_model_then_a_partner_it_may_meet():
    """Three agents of one provider, one of a second and one of a third: the chance of each
    pair is that of drawing either model first and the other as its partner."""
    provider = np.array([0, 0, 0, 1, 2])
    allowed = provider[:, None] != provider[None, :]
    p = partner_pairs(allowed)
    assert _upper_sum(p) == pytest.approx(1.0)
    assert np.allclose(p, p.T) and np.all(np.diag(p) == 0)
    partners = allowed.sum(axis=1)
    for i in range(5):
        for j in range(i + 1, 5):
            expected = (1 / 5) * (1 / partners[i] + 1 / partners[j]) if allowed[i, j] else 0.0
            assert p[i, j] == pytest.approx(expected)
    assert np.allclose(partner_pairs(np.zeros((3, 3), dtype=bool)), uniform_pairs(3))

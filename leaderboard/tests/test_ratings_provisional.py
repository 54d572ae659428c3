"""Provisional models (too few votes) shown sanely: a weak prior, established models left be."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.ratings.bradley_terry import sandwich_bradley_terry
from leaderboard.ratings.outcomes import A_WINS, B_WINS
from leaderboard.ratings.provisional import PRIOR_MEAN, PRIOR_SD, shrink_provisional
from leaderboard.ratings.synthetic import simulate_grouped_votes
from leaderboard.ratings.votes_file import group_outcomes, read_votes
from leaderboard.tests.test_ratings_bradley_terry import shared_data_dir


def _fit_and_shrink(a, b, code, count, n, provisional):
    fit = sandwich_bradley_terry(a, b, code, count, n)
    return fit, shrink_provisional(fit.ratings, fit.ci_lower, fit.ci_upper, a, b, code, count,
                                   provisional)


def test_one_vote_between_two_new_models_is_no_swing_of_thousands():
    a, b, code, count = (np.array([0]), np.array([1]), np.array([A_WINS]), np.array([1]))
    fit, (rating, lower, upper) = _fit_and_shrink(a, b, code, count, 2, np.array([True, True]))
    assert fit.ratings[0] > 2500  # the bare maximum-likelihood fit: the reported defect
    assert PRIOR_MEAN < rating[0] < PRIOR_MEAN + 100
    assert PRIOR_MEAN - 100 < rating[1] < PRIOR_MEAN
    assert rating.mean() == pytest.approx(PRIOR_MEAN)
    half = upper - rating
    assert np.allclose(half, rating - lower)
    assert np.all((half > 300) & (half < 1.96 * PRIOR_SD))  # one vote narrows the prior a bit


def test_a_newcomer_moves_no_established_model_and_sits_near_its_opponents():
    rng = np.random.default_rng(3)
    true = np.array([1200.0, 1100.0, 1000.0, 950.0, 900.0, 800.0])
    a, b, code, count = simulate_grouped_votes(true, 20_000, rng=rng)
    established = sandwich_bradley_terry(a, b, code, count, 6).ratings
    # A seventh model wins its only two votes, both against the strongest model.
    a2, b2 = np.append(a, [6, 0]), np.append(b, [0, 6])
    code2, count2 = np.append(code, [A_WINS, B_WINS]), np.append(count, [1, 1])
    provisional = np.array([False] * 6 + [True])
    fit, (rating, lower, upper) = _fit_and_shrink(a2, b2, code2, count2, 7, provisional)
    assert fit.ratings[6] > 2000  # unshrunk: infinite in all but name
    assert np.abs(rating[:6] - established).max() < 0.1
    assert rating[:6].mean() == pytest.approx(PRIOR_MEAN)
    # Two wins over the leader lift it above the mean, but not past what two votes can show.
    assert PRIOR_MEAN < rating[6] < PRIOR_MEAN + 2 * PRIOR_SD
    assert lower[6] < established[0] < upper[6]


def test_many_votes_outweigh_the_prior():
    rng = np.random.default_rng(5)
    true = np.array([1300.0, 1000.0, 900.0])
    a, b, code, count = simulate_grouped_votes(true, 30_000, rng=rng)
    fit, (rating, _, _) = _fit_and_shrink(a, b, code, count, 3, np.array([True, False, False]))
    # Held to the prior, a model with ten thousand votes moves by a few points at most.
    assert abs(rating[0] - (fit.ratings[0] - fit.ratings[1:].mean() + PRIOR_MEAN)) < 5


def test_on_the_real_data_the_gaps_between_established_models_do_not_move():
    path = shared_data_dir() / "arena_human_preference_140k.csv.gz"
    if not path.is_file():
        pytest.skip(f"{path} is absent (set ARENA_SHARED_DATA to the shared data folder)")
    votes = read_votes(path, skip_self_matches=True)
    a, b, code, count = group_outcomes(votes.a_idx, votes.b_idx, votes.outcome)
    n = len(votes.models)
    per_model = np.bincount(a, count, n) + np.bincount(b, count, n)
    provisional = per_model < 5
    assert provisional.sum() == 1  # qwen3-coder-480b-a35b-instruct, with 2 votes
    fit, (rating, lower, upper) = _fit_and_shrink(a, b, code, count, n, provisional)
    moved = rating[~provisional] - fit.ratings[~provisional]
    # One constant: the established models are re-centred to average 1000 without the
    # provisional one (0.3 points here); every gap between them is exactly as fitted.
    assert np.ptp(moved) < 1e-9 and abs(moved[0]) < 0.5
    # So the established models are rated as if the provisional one had never played:
    # within 0.1 of the fit of their votes alone (issue 13).
    settled = np.flatnonzero(~provisional)
    index = np.full(n, -1)
    index[settled] = np.arange(settled.size)
    alone = ~provisional[a] & ~provisional[b]
    without = sandwich_bradley_terry(index[a[alone]], index[b[alone]], code[alone],
                                     count[alone], settled.size)
    assert np.abs(rating[settled] - without.ratings).max() < 0.1
    assert np.allclose(upper[~provisional] - rating[~provisional],
                       fit.ci_upper[~provisional] - fit.ratings[~provisional])
    assert abs(rating[provisional][0] - PRIOR_MEAN) < 50

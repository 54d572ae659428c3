"""Bradley–Terry fit, bootstrap and sandwich intervals, Rank (UB)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from leaderboard.ratings.bradley_terry import (
    bootstrap_bradley_terry,
    fit_bradley_terry,
    rank_upper_bound,
    sandwich_bradley_terry,
)
from leaderboard.ratings.outcomes import A_WINS, B_WINS, BOTH_BAD, TIE
from leaderboard.ratings.synthetic import simulate_grouped_votes
from leaderboard.ratings.votes_file import group_outcomes, read_votes

# FastChat ``compute_bt`` on the shared 140k release (see shared/data/README.md).
REFERENCE_TOP3 = [
    ("gemini-2.5-pro", 1124.07),
    ("gemini-2.5-pro-preview-03-25", 1097.86),
    ("grok-4-0709", 1093.38),
]


def shared_data_dir() -> Path:
    """``$ARENA_SHARED_DATA`` or ``shared/data`` beside the repository."""
    env = os.environ.get("ARENA_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="module")
def real() -> tuple[list[str], tuple[np.ndarray, ...]]:
    path = shared_data_dir() / "arena_human_preference_140k.csv.gz"
    if not path.is_file():
        pytest.skip(f"{path} is absent (set ARENA_SHARED_DATA to the shared data folder)")
    votes = read_votes(path, skip_self_matches=True)
    return votes.models, group_outcomes(votes.a_idx, votes.b_idx, votes.outcome)


def rows(*triples: tuple[int, int, int, int]) -> tuple[np.ndarray, ...]:
    """(a, b, outcome, count) rows -> four arrays."""
    return tuple(np.array(column) for column in zip(*triples, strict=True))


def test_real_data_matches_fastchat_reference(real) -> None:
    models, grouped = real
    ratings = fit_bradley_terry(*grouped, len(models))
    order = np.argsort(-ratings)
    assert [models[i] for i in order[:3]] == [name for name, _ in REFERENCE_TOP3]
    got = {models[i]: ratings[i] for i in order[:3]}
    (top, r1), (second, r2), (third, r3) = REFERENCE_TOP3
    assert got[top] - got[second] == pytest.approx(r1 - r2, abs=0.05)
    assert got[top] - got[third] == pytest.approx(r1 - r3, abs=0.05)
    assert ratings.mean() == pytest.approx(1000.0, abs=1e-6)
    # FastChat stops L-BFGS early; the exact optimum sits ~0.3 points lower for the top model.
    assert got[top] == pytest.approx(r1, abs=0.5)


def test_sandwich_close_to_bootstrap_on_real_data(real) -> None:
    models, grouped = real
    n = len(models)
    boot = bootstrap_bradley_terry(*grouped, n, n_rounds=100, seed=0)
    sand = sandwich_bradley_terry(*grouped, n)
    np.testing.assert_allclose(boot.ratings, sand.ratings)
    a, b, _, count = grouped
    votes = np.bincount(a, count, n) + np.bincount(b, count, n)
    well_measured = votes >= 1000  # with a handful of votes neither interval means much
    assert well_measured.sum() >= 40
    ratio = (sand.ci_upper - sand.ci_lower) / (boot.ci_upper - boot.ci_lower)
    assert np.all((ratio[well_measured] > 0.7) & (ratio[well_measured] < 1.3))
    assert 0.9 < np.median(ratio[well_measured]) < 1.15
    for result in (boot, sand):
        assert np.all(result.ci_lower <= result.ratings)
        assert np.all(result.ratings <= result.ci_upper)
    assert boot.rank_ub[np.argmax(boot.ratings)] == 1


def test_two_models_closed_form() -> None:
    # 30 wins, 10 losses, 20 ties (half a win each): 40 vs 20 -> 400 log10(2) apart.
    grouped = rows((0, 1, A_WINS, 30), (0, 1, B_WINS, 10), (0, 1, TIE, 20))
    ratings = fit_bradley_terry(*grouped, 2)
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(2), abs=1e-4)
    assert ratings.mean() == pytest.approx(1000.0)


def test_tie_and_both_bad_count_the_same() -> None:
    base = [(0, 1, A_WINS, 7), (1, 2, B_WINS, 5), (2, 0, A_WINS, 3)]
    with_tie = fit_bradley_terry(*rows(*base, (0, 2, TIE, 9)), 3)
    with_both_bad = fit_bradley_terry(*rows(*base, (0, 2, BOTH_BAD, 9)), 3)
    np.testing.assert_allclose(with_tie, with_both_bad, atol=1e-9)


def test_grouping_and_side_order_do_not_matter() -> None:
    rng = np.random.default_rng(5)
    a, b, outcome, count = simulate_grouped_votes(
        rng.normal(1000, 80, 6), 3000, rng=np.random.default_rng(6)
    )
    grouped = fit_bradley_terry(a, b, outcome, count, 6)
    per_vote = [np.repeat(x, count) for x in (a, b, outcome)]
    ungrouped = fit_bradley_terry(*per_vote, np.ones(count.sum()), 6)
    np.testing.assert_allclose(grouped, ungrouped, atol=1e-6)
    flipped_outcome = np.choose(outcome, [B_WINS, A_WINS, TIE, BOTH_BAD])
    flipped = fit_bradley_terry(b, a, flipped_outcome, count, 6)
    np.testing.assert_allclose(grouped, flipped, atol=1e-6)


def test_recovers_known_ratings() -> None:
    truth = np.array([1200.0, 1100.0, 1050.0, 1000.0, 980.0, 900.0, 870.0, 900.0])
    truth += 1000 - truth.mean()
    grouped = simulate_grouped_votes(truth, 200_000, rng=np.random.default_rng(11))
    result = sandwich_bradley_terry(*grouped, truth.size)
    se = (result.ci_upper - result.ci_lower) / (2 * 1.959964)
    assert np.all(np.abs(result.ratings - truth) < 4 * se)
    assert np.all(se < 5)


def test_bootstrap_intervals_contain_estimate_and_shrink_with_votes() -> None:
    truth = np.linspace(850, 1150, 10)
    widths = {}
    for n_votes in (2_000, 50_000):
        grouped = simulate_grouped_votes(truth, n_votes, rng=np.random.default_rng(n_votes))
        result = bootstrap_bradley_terry(*grouped, truth.size, n_rounds=100, seed=1)
        assert np.all(result.ci_lower <= result.ratings)
        assert np.all(result.ratings <= result.ci_upper)
        widths[n_votes] = result.ci_upper - result.ci_lower
    assert np.all(widths[50_000] < widths[2_000])
    # 25 times the votes: about 1/5 of the width.
    assert 0.12 < np.median(widths[50_000] / widths[2_000]) < 0.3


def test_bootstrap_is_seeded() -> None:
    grouped = simulate_grouped_votes(np.linspace(900, 1100, 5), 5000, rng=np.random.default_rng(2))
    first = bootstrap_bradley_terry(*grouped, 5, n_rounds=20, seed=3)
    again = bootstrap_bradley_terry(*grouped, 5, n_rounds=20, seed=3)
    other = bootstrap_bradley_terry(*grouped, 5, n_rounds=20, seed=4)
    np.testing.assert_array_equal(first.ci_lower, again.ci_lower)
    assert not np.array_equal(first.ci_lower, other.ci_lower)


def test_scale_base_and_init_options() -> None:
    grouped = rows((0, 1, A_WINS, 30), (0, 1, B_WINS, 10), (1, 2, A_WINS, 12), (1, 2, B_WINS, 8))
    default = fit_bradley_terry(*grouped, 3)
    shifted = fit_bradley_terry(*grouped, 3, init_rating=1500)
    np.testing.assert_allclose(shifted - 500, default, atol=1e-6)
    halved = fit_bradley_terry(*grouped, 3, scale=200)
    np.testing.assert_allclose(halved - 1000, (default - 1000) / 2, atol=1e-6)
    natural = fit_bradley_terry(*grouped, 3, base=math.e, scale=1, init_rating=0)
    assert natural[0] - natural[1] == pytest.approx(math.log(3), abs=1e-6)


def test_unbeaten_model_stays_finite() -> None:
    grouped = rows((0, 1, A_WINS, 20), (1, 2, A_WINS, 10), (1, 2, B_WINS, 10))
    ratings = fit_bradley_terry(*grouped, 3)
    assert np.all(np.isfinite(ratings))
    assert ratings[0] > ratings[1] + 1000
    assert ratings[1] == pytest.approx(ratings[2], abs=1e-3)


def test_model_without_votes_sits_at_init_and_leaves_the_others_alone() -> None:
    grouped = rows((0, 1, A_WINS, 30), (0, 1, B_WINS, 10), (1, 2, A_WINS, 12), (2, 1, TIE, 8))
    alone = fit_bradley_terry(*grouped, 3)
    with_unseen = fit_bradley_terry(*grouped, 4)
    assert with_unseen[3] == pytest.approx(1000.0, abs=1e-3)
    np.testing.assert_allclose(with_unseen[:3] - with_unseen[0], alone - alone[0], atol=1e-3)


def test_rank_upper_bound_hand_example() -> None:
    lower = np.array([1090.0, 1085.0, 1060.0, 1001.0, 990.0, 1059.0])
    upper = np.array([1110.0, 1100.0, 1080.0, 1020.0, 1000.0, 1089.0])
    # model 2: lower bounds above 1080 -> models 0 and 1 -> rank 3
    # model 3: above 1020 -> 0, 1, 2, 5 -> rank 5; model 4: also 3 (1001 > 1000) -> rank 6
    # model 5: above 1089 -> model 0 only (1085 is not above 1089) -> rank 2
    assert rank_upper_bound(lower, upper).tolist() == [1, 1, 3, 5, 6, 2]
    # strict inequality: a lower bound equal to my upper bound does not count
    assert rank_upper_bound([10.0, 5.0], [12.0, 10.0]).tolist() == [1, 1]


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="itself"):
        fit_bradley_terry(*rows((0, 0, A_WINS, 1)), 2)
    with pytest.raises(ValueError, match="model indices"):
        fit_bradley_terry(*rows((0, 2, A_WINS, 1)), 2)
    with pytest.raises(ValueError, match="non-negative"):
        fit_bradley_terry(*rows((0, 1, A_WINS, -1)), 2)
    with pytest.raises(ValueError, match="outcome codes"):
        fit_bradley_terry(*rows((0, 1, 7, 1)), 2)

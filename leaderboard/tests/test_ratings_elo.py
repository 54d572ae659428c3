"""Online Elo: hand-computed updates and the batch replay."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from leaderboard.ratings.elo import elo_ratings, elo_update, expected_score
from leaderboard.ratings.outcomes import (
    A_WINS,
    B_WINS,
    BOTH_BAD,
    ELO_SCORES,
    TIE,
    parse_outcome,
)


def test_equal_ratings_win() -> None:
    assert elo_update(1500, 1500, 1, 0) == pytest.approx((1516.0, 1484.0))


def test_equal_ratings_loss() -> None:
    assert elo_update(1500, 1500, 0, 1) == pytest.approx((1484.0, 1516.0))


def test_both_bad_from_equal_ratings_costs_each_eight_points() -> None:
    # 1500 + 32 * (0.25 - 0.5) = 1492 for both: deliberately not zero-sum.
    assert elo_update(1500, 1500, 0.25, 0.25) == pytest.approx((1492.0, 1492.0))


def test_tie_between_1600_and_1400() -> None:
    e_a = 1 / (1 + 10 ** (-200 / 400))  # 0.759747...
    assert e_a == pytest.approx(0.7597469266)
    new_a, new_b = elo_update(1600, 1400, 0.5, 0.5)
    assert new_a == pytest.approx(1600 + 32 * (0.5 - e_a))  # 1591.688
    assert new_b == pytest.approx(1400 + 32 * (0.5 - (1 - e_a)))  # 1408.312
    assert new_a == pytest.approx(1591.688098, abs=1e-6)
    assert new_a + new_b == pytest.approx(3000.0)


def test_upset_win_by_the_weaker_player() -> None:
    new_a, new_b = elo_update(1400, 1600, 1, 0)
    assert new_a == pytest.approx(1400 + 32 * (1 - 0.2402530734))
    assert new_b == pytest.approx(1600 - 32 * 0.7597469266)


def test_custom_k() -> None:
    assert elo_update(1500, 1500, 1, 0, k=16) == pytest.approx((1508.0, 1492.0))


def test_expected_score_is_symmetric() -> None:
    assert expected_score(1700, 1300) + expected_score(1300, 1700) == pytest.approx(1.0)
    assert expected_score(1500, 1500) == 0.5


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("model_a", A_WINS),
        ("left_better", A_WINS),
        ("model_b", B_WINS),
        ("right_better", B_WINS),
        ("tie", TIE),
        ("both_bad", BOTH_BAD),
        ("tie (bothbad)", BOTH_BAD),
        (" Model_A ", A_WINS),
    ],
)
def test_parse_outcome(text: str, code: int) -> None:
    assert parse_outcome(text) == code


def test_parse_outcome_rejects_unknown() -> None:
    with pytest.raises(ValueError, match="unknown outcome 'draw'"):
        parse_outcome("draw")


def test_score_table() -> None:
    assert ELO_SCORES.tolist() == [[1, 0], [0, 1], [0.5, 0.5], [0.25, 0.25]]


def test_batch_replays_single_updates_in_order() -> None:
    rng = np.random.default_rng(7)
    n_models, n_votes = 5, 300
    a = rng.integers(0, n_models, n_votes)
    b = (a + rng.integers(1, n_models, n_votes)) % n_models
    outcome = rng.integers(0, 4, n_votes)
    expected = [1500.0] * n_models
    for i, j, o in zip(a, b, outcome, strict=True):
        expected[i], expected[j] = elo_update(expected[i], expected[j], *ELO_SCORES[o])
    got = elo_ratings(a, b, outcome, n_models)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)


def test_batch_order_matters() -> None:
    a, b = np.array([0, 0]), np.array([1, 1])
    first = elo_ratings(a, b, np.array([A_WINS, B_WINS]), 2)
    second = elo_ratings(a, b, np.array([B_WINS, A_WINS]), 2)
    assert first[0] != second[0]


def test_batch_zero_sum_except_both_bad() -> None:
    a, b = np.array([0, 1, 2, 0]), np.array([1, 2, 0, 2])
    decisive = elo_ratings(a, b, np.array([A_WINS, B_WINS, TIE, A_WINS]), 3)
    assert decisive.sum() == pytest.approx(4500.0)
    with_both_bad = elo_ratings(a, b, np.array([A_WINS, BOTH_BAD, TIE, A_WINS]), 3)
    assert with_both_bad.sum() < 4500.0


def test_batch_continues_from_given_ratings() -> None:
    got = elo_ratings(np.array([0]), np.array([1]), np.array([TIE]), 2, initial=[1600, 1400])
    np.testing.assert_allclose(got, elo_update(1600, 1400, 0.5, 0.5))


def test_batch_without_votes_returns_the_start() -> None:
    empty = np.zeros(0, dtype=int)
    np.testing.assert_array_equal(elo_ratings(empty, empty, empty, 3), [1500.0] * 3)


def test_batch_rejects_bad_input() -> None:
    one = np.array([0])
    with pytest.raises(ValueError, match="outcome codes"):
        elo_ratings(one, one + 1, np.array([4]), 2)
    with pytest.raises(ValueError, match="model indices"):
        elo_ratings(one, one + 2, np.array([0]), 2)
    with pytest.raises(ValueError, match="same length"):
        elo_ratings(one, np.array([1, 0]), one, 2)


def test_ratings_package_imports_neither_django_nor_the_project() -> None:
    code = (
        "import sys, leaderboard.ratings; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'arena', 'battles', 'debates', 'agents'} "
        "or (m.startswith('leaderboard.') and not m.startswith('leaderboard.ratings'))); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr

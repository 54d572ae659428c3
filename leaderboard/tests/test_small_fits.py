"""Every rating engine a board can use, on the vote sets a new arena starts from: one vote,
two, a pair voted one way only, ties and both-bad, style that never varies. A rating run
must never fail on them (the text board froze after its second vote: style control's
Newton step hit a singular Hessian)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard.ratings import A_WINS, B_WINS, BOTH_BAD, TIE
from leaderboard.ratings.style_control import (
    CONFOUNDED,
    CONSTANT,
    FITTED,
    SEPARATES,
    fit_style_controlled,
    style_features,
)
from leaderboard.runs import compute

CODES = (A_WINS, B_WINS, TIE, BOTH_BAD)


@st.composite
def small_votes(draw):
    """1-60 votes among 2-12 models (possibly all between one pair, one way), with style
    counts that may be constant, tiny or copies of each other."""
    n = draw(st.integers(2, 12))
    votes = draw(st.integers(1, 60))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                          .filter(lambda p: p[0] != p[1]), min_size=1, max_size=6))
    pick = draw(st.lists(st.integers(0, len(pairs) - 1), min_size=votes, max_size=votes))
    a = np.array([pairs[i][0] for i in pick], dtype=np.int64)
    b = np.array([pairs[i][1] for i in pick], dtype=np.int64)
    code = np.array(draw(st.lists(st.sampled_from(CODES), min_size=votes, max_size=votes)),
                    dtype=np.int64)
    style = draw(st.sampled_from(["constant", "zero", "copies", "random"]))
    if style == "zero":
        style_a = style_b = np.zeros((votes, 4), dtype=np.int64)
    elif style == "constant":
        style_a = style_b = np.full((votes, 4), 7, dtype=np.int64)
    else:
        column = st.lists(st.integers(0, 400), min_size=votes, max_size=votes)
        style_a = np.column_stack([draw(column) for _ in range(4)])
        style_b = np.column_stack([draw(column) for _ in range(4)])
        if style == "copies":  # every element the same difference as the length's
            style_a = np.repeat(style_a[:, :1], 4, axis=1)
            style_b = np.repeat(style_b[:, :1], 4, axis=1)
    return n, a, b, code, style_a, style_b


def _finite(fit: compute.Fit) -> bool:
    return all(np.all(np.isfinite(x)) for x in (fit.rating, fit.ci_lower, fit.ci_upper))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_votes())
def test_every_engine_fits_small_vote_sets_without_failing(votes):
    n, a, b, code, style_a, style_b = votes
    ones = np.ones(a.size, dtype=np.int64)
    winner = {A_WINS: "model_a", B_WINS: "model_b", TIE: "tie", BOTH_BAD: "both_bad"}
    rows = [(f"m{i}", f"m{j}", winner[c], 1) for i, j, c in zip(a, b, code, strict=True)]
    grouped = compute.group_rows(rows)
    tally = compute.tally(grouped)
    provisional = tally.votes < 5
    for fit in (compute.fit_bt(grouped, ci_method="sandwich"),
                compute.fit_bt(grouped, ci_method="bootstrap", rounds=20),
                compute.fit_elo(grouped.subjects, grouped.a, grouped.b, grouped.code,
                                ci_method="bootstrap", rounds=20),
                compute.fit_glicko2(grouped.n, [(grouped.a, grouped.b, grouped.code,
                                                 grouped.count)])):
        fit = compute.shrink_provisional(fit, grouped, provisional)
        assert _finite(fit), fit
        compute.ranks(fit.ci_lower, fit.ci_upper, ~provisional)
        compute.plot_data(grouped, fit, ~provisional, ~provisional, limit=10)
    styled, coefficients = compute.fit_style(a, b, code, style_a, style_b, n)
    assert _finite(styled)
    assert _finite(compute.shrink_provisional(styled, compute.Grouped(
        [f"m{i}" for i in range(n)], a, b, code, ones), np.zeros(n, dtype=bool)))
    for _name, value, lower, upper, status in coefficients:
        assert np.isfinite([value, lower, upper]).all()
        assert status in (FITTED, CONSTANT, CONFOUNDED, SEPARATES)
        if status != FITTED:
            assert value == lower == upper == 0.0


def test_the_reported_votes_fit_without_the_style_they_cannot_estimate():
    """Vote Left on one battle and Tie on a second between the same two models: every style
    difference is the models' own difference, so the fit is plain Bradley–Terry and says
    why (the run used to fail with LinAlgError: Singular matrix)."""
    a, b, code = np.array([0, 1]), np.array([1, 0]), np.array([A_WINS, TIE])
    style_a = np.array([[120, 2, 0, 1], [50, 0, 3, 0]])
    style_b = np.array([[40, 0, 1, 0], [60, 1, 0, 2]])
    result = fit_style_controlled(a, b, code, style_features(style_a, style_b), 2)
    assert result.status == (CONFOUNDED,) * 4
    assert result.ratings[0] > result.ratings[1]
    assert result.ratings.mean() == pytest.approx(1000.0)


def test_an_element_that_copies_another_leaves_the_fit_the_first_stays():
    rng = np.random.default_rng(3)
    votes = 400
    a = rng.integers(0, 5, votes)
    b = (a + rng.integers(1, 5, votes)) % 5
    length = rng.normal(size=votes)
    x = np.column_stack([length, length, rng.normal(size=votes), np.zeros(votes)])
    p = 1 / (1 + np.exp(-0.5 * length))
    code = np.where(rng.random(votes) < p, A_WINS, B_WINS)
    result = fit_style_controlled(a, b, code, x, 5)
    assert result.status == (FITTED, CONFOUNDED, FITTED, CONSTANT)
    assert 0.2 < result.coefficients[0] < 0.8


def test_an_element_the_votes_split_on_leaves_the_fit():
    """Whenever side a wrote longer, a won: the length effect has no finite estimate."""
    rng = np.random.default_rng(4)
    votes = 40
    a = rng.integers(0, 4, votes)
    b = (a + rng.integers(1, 4, votes)) % 4
    length = rng.normal(size=votes)
    code = np.where(length > 0, A_WINS, B_WINS)
    x = np.column_stack([length, np.zeros((votes, 3))])
    result = fit_style_controlled(a, b, code, x, 4)
    assert result.status[0] == SEPARATES
    assert np.all(np.isfinite(result.ratings))

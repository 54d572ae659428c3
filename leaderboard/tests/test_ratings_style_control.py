"""Style control on synthetic votes with known strengths and a known length bias."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.ratings.bradley_terry import sandwich_bradley_terry
from leaderboard.ratings.outcomes import A_WINS, B_WINS, BOTH_BAD, TIE
from leaderboard.ratings.style_control import fit_style_controlled, style_features
from leaderboard.ratings.votes_file import group_outcomes

N_MODELS, N_VOTES, LENGTH_BIAS = 8, 60_000, 0.6


def _simulate(seed: int, bias: float, *, ties: float = 0.0):
    """Weaker models write longer answers, and people like longer answers (``bias`` on the
    standardised length difference); a share ``ties`` of votes are ties or both-bad."""
    rng = np.random.default_rng(seed)
    true = np.linspace(880, 1120, N_MODELS)
    verbosity = np.linspace(1.6, 0.6, N_MODELS)
    a = rng.integers(0, N_MODELS, N_VOTES)
    b = rng.integers(0, N_MODELS - 1, N_VOTES)
    b = np.where(b >= a, b + 1, b)
    tokens_a = rng.poisson(300 * verbosity[a] * rng.lognormal(0, 0.5, N_VOTES))
    tokens_b = rng.poisson(300 * verbosity[b] * rng.lognormal(0, 0.5, N_VOTES))
    none = np.zeros((N_VOTES, 3))
    x = style_features(np.column_stack([tokens_a, none]), np.column_stack([tokens_b, none]))
    p = 1 / (1 + np.exp(-(np.log(10) * (true[a] - true[b]) / 400 + bias * x[:, 0])))
    u = rng.random(N_VOTES)
    code = np.where(u < ties * 2 / 3, TIE, np.where(u < ties, BOTH_BAD,
                    np.where(rng.random(N_VOTES) < p, A_WINS, B_WINS)))
    return true, a, b, code, x


def _centred(r: np.ndarray) -> np.ndarray:
    return r - r.mean()


def test_the_fit_recovers_the_strengths_and_the_length_bias():
    true, a, b, code, x = _simulate(0, LENGTH_BIAS)
    styled = fit_style_controlled(a, b, code, x, N_MODELS)
    assert styled.coef_lower[0] < LENGTH_BIAS < styled.coef_upper[0]
    assert styled.coefficients[0] == pytest.approx(LENGTH_BIAS, abs=0.1)
    assert np.all(styled.coefficients[1:] == 0)  # no headers, lists or bold in this data
    error = np.abs(_centred(styled.ratings) - _centred(true))
    assert error.max() < 25
    inside = (styled.ci_lower - styled.ratings.mean() + true.mean() <= true) & (
        true <= styled.ci_upper - styled.ratings.mean() + true.mean())
    assert inside.mean() >= 0.75
    # The plain fit credits the verbose (weaker) models with the bias.
    ga, gb, gc, gn = group_outcomes(a, b, code)
    plain = sandwich_bradley_terry(ga, gb, gc, gn, N_MODELS)
    assert np.abs(_centred(plain.ratings) - _centred(true)).max() > 2 * error.max()


def test_without_a_bias_style_control_changes_nothing_that_matters():
    true, a, b, code, x = _simulate(1, 0.0, ties=0.15)
    styled = fit_style_controlled(a, b, code, x, N_MODELS)
    assert styled.coef_lower[0] < 0 < styled.coef_upper[0]
    ga, gb, gc, gn = group_outcomes(a, b, code)
    plain = sandwich_bradley_terry(ga, gb, gc, gn, N_MODELS)
    assert np.abs(styled.ratings - plain.ratings).max() < 15
    assert styled.ratings.mean() == pytest.approx(1000.0)


def test_features_are_normalised_differences_standardised():
    x = style_features(np.array([[10, 0], [0, 0], [30, 2]]), np.array([[30, 0], [0, 0], [10, 2]]))
    assert np.allclose(x[:, 0].mean(), 0) and np.allclose(x[:, 0].std(), 1)
    assert np.all(x[:, 1] == 0)  # no variation, no signal
    assert x[0, 0] < x[1, 0] < x[2, 0]


def test_newton_reaches_the_optimum_a_general_optimiser_finds():
    """The fit's Newton steps with hand-built Hessians against SciPy's L-BFGS on the same
    penalised loss written plainly (dense design matrix)."""
    from scipy.optimize import minimize
    from scipy.special import log_expit

    from leaderboard.ratings.outcomes import BT_LABELS
    from leaderboard.ratings.style_control import L2

    _true, a, b, code, x = _simulate(2, LENGTH_BIAS, ties=0.1)
    a, b, code, x = a[:5000], b[:5000], code[:5000], x[:5000, :1]
    styled = fit_style_controlled(a, b, code, x, N_MODELS)
    design = np.zeros((a.size, N_MODELS + 1))
    design[np.arange(a.size), a] += np.log(10)
    design[np.arange(a.size), b] -= np.log(10)
    design[:, N_MODELS] = x[:, 0]
    y = BT_LABELS[code]
    lam = L2 * a.size

    def loss(params):
        z = design @ params
        return (-(y * log_expit(z) + (1 - y) * log_expit(-z)).sum()
                + 0.5 * lam * np.sum(params[:N_MODELS] ** 2))

    best = minimize(loss, np.zeros(N_MODELS + 1), method="L-BFGS-B",
                    options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 5000}).x
    ratings = 400 * (best[:N_MODELS] - best[:N_MODELS].mean()) + 1000
    assert styled.ratings == pytest.approx(ratings, abs=0.05)
    assert styled.coefficients[0] == pytest.approx(best[N_MODELS], abs=1e-4)

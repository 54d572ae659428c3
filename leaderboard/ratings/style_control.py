"""Bradley–Terry with style control (FastChat's and LMArena's): ratings with the effect of
answer style (length, Markdown headers, lists, bold) taken out.

Each vote carries, per style element, the counts of both answers. The feature is the
normalised difference (a - b) / (a + b) (0 when both are 0), standardised over the votes
(mean 0, standard deviation 1), and the model is

    P(a beats b) = σ(ln(10) (r_a - r_b) + θ · x),        rating_i = 400 r_i + 1000

fitted jointly on every vote by Newton's method (ties and both-bad count as half a win, as
in :mod:`.bradley_terry`); the Hessian is built from per-pair and per-model sums, so a
step costs a few passes over the votes, not a sparse matrix product. θ says how much a
standard deviation of each style difference moves the odds; the ratings are what is left
once style is held equal. Intervals are the sandwich (robust) ones of ``arena-rank``:
cov = H⁺ B H⁺ over all parameters, the pseudo-inverse taken on the subspace where the
ratings are centred.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import expit, ndtri

from ._blas import single_threaded
from .bradley_terry import BASE, INIT_RATING, SCALE
from .outcomes import BT_LABELS, check_codes

STYLE_ELEMENTS = ("tokens", "headers", "lists", "bold")
L2 = 1e-6  # per vote: keeps the optimum finite for a model that won every vote
ALPHA = math.log(BASE)
MAX_NEWTON_STEPS = 50
NEWTON_TOLERANCE = 1e-10


class StyleResult(NamedTuple):
    ratings: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    coefficients: np.ndarray  # θ, one per style element
    coef_lower: np.ndarray
    coef_upper: np.ndarray


def style_features(counts_a: np.ndarray, counts_b: np.ndarray) -> np.ndarray:
    """Standardised normalised differences, one column per style element."""
    a = np.asarray(counts_a, dtype=float)
    b = np.asarray(counts_b, dtype=float)
    total = a + b
    diff = np.divide(a - b, total, out=np.zeros_like(total), where=total > 0)
    sd = diff.std(axis=0)
    return np.divide(diff - diff.mean(axis=0), sd, out=np.zeros_like(diff), where=sd > 0)


@single_threaded()
def fit_style_controlled(a_idx: np.ndarray, b_idx: np.ndarray, outcome: np.ndarray,
                         features: np.ndarray, n_models: int, *,
                         confidence: float = 0.95) -> StyleResult:
    """Style-controlled ratings (mean 1000) and style coefficients, with sandwich intervals."""
    a = np.asarray(a_idx, dtype=np.int64)
    b = np.asarray(b_idx, dtype=np.int64)
    y = BT_LABELS[check_codes(outcome)]
    x_all = np.asarray(features, dtype=float).reshape(a.size, -1)
    # A style element no answer has (a column of zeros) has nothing to learn from: its
    # coefficient is 0, exactly, and it leaves the fit (its Hessian row would be zero).
    varies = np.flatnonzero(np.any(x_all != 0, axis=0))
    x = x_all[:, varies]
    k = x.shape[1]
    penalty = np.r_[np.full(n_models, L2 * a.size), np.zeros(k)]
    params = np.zeros(n_models + k)
    for _ in range(MAX_NEWTON_STEPS):
        p = expit(_logits(a, b, x, params))
        grad = -_design_t(a, b, x, y - p, n_models) + penalty * params
        hessian = _gram(a, b, x, p * (1 - p), n_models)
        hessian[np.diag_indices_from(hessian)] += penalty
        step = np.linalg.solve(hessian, grad)
        params -= step
        if np.abs(step).max() < NEWTON_TOLERANCE:
            break
    params[:n_models] -= params[:n_models].mean()
    cov = _sandwich(a, b, x, y, params, n_models)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    z95 = float(ndtri(0.5 + confidence / 2))
    r, r_se = params[:n_models], se[:n_models]
    theta, theta_se = np.zeros(x_all.shape[1]), np.zeros(x_all.shape[1])
    theta[varies], theta_se[varies] = params[n_models:], se[n_models:]
    return StyleResult(
        SCALE * r + INIT_RATING, SCALE * (r - z95 * r_se) + INIT_RATING,
        SCALE * (r + z95 * r_se) + INIT_RATING,
        theta, theta - z95 * theta_se, theta + z95 * theta_se,
    )


def _logits(a, b, x, params) -> np.ndarray:
    n_models = params.size - x.shape[1]
    r = params[:n_models]
    return ALPHA * (r[a] - r[b]) + x @ params[n_models:]


def _design_t(a, b, x, weights, n_models: int) -> np.ndarray:
    """Dᵀ·weights, D the design matrix (row i: α on a_i, −α on b_i, then x_i)."""
    per_model = ALPHA * (np.bincount(a, weights, n_models) - np.bincount(b, weights, n_models))
    return np.r_[per_model, x.T @ weights]


def _gram(a, b, x, weights, n_models: int) -> np.ndarray:
    """Dᵀ diag(weights) D, built from per-pair and per-model sums instead of the design
    matrix: a million votes cost a few bincounts."""
    k = x.shape[1]
    out = np.empty((n_models + k, n_models + k))
    pairs = np.bincount(a * n_models + b, weights, n_models * n_models).reshape(
        n_models, n_models)
    pairs = pairs + pairs.T
    models = out[:n_models, :n_models]
    models[:] = -ALPHA**2 * pairs
    models[np.diag_indices(n_models)] = ALPHA**2 * pairs.sum(axis=1)
    wx = x * weights[:, None]
    cross = ALPHA * np.array([np.bincount(a, wx[:, j], n_models)
                              - np.bincount(b, wx[:, j], n_models) for j in range(k)]
                             ).reshape(k, n_models).T
    out[:n_models, n_models:] = cross
    out[n_models:, :n_models] = cross.T
    out[n_models:, n_models:] = x.T @ wx
    return out


def _sandwich(a, b, x, y: np.ndarray, params: np.ndarray, n_models: int) -> np.ndarray:
    """H⁺ B H⁺ with H the Hessian and B the outer products of per-vote scores; the
    pseudo-inverse ignores the direction that moves every rating together."""
    p = expit(_logits(a, b, x, params))
    h = _gram(a, b, x, p * (1 - p), n_models)
    meat = _gram(a, b, x, (y - p) ** 2, n_models)
    # Project out the all-ratings direction (ratings are only defined up to a constant).
    basis = np.eye(h.shape[0])
    basis[:n_models, :n_models] -= 1.0 / n_models
    h_inv = np.linalg.pinv(basis @ h @ basis, hermitian=True)
    return h_inv @ meat @ h_inv

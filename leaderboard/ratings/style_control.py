"""Bradley–Terry with style control (FastChat's and LMArena's): ratings with the effect of
answer style (length, Markdown headers, lists, bold) taken out.

Each vote carries, per style element, the counts of both answers. The feature is the
normalised difference (a - b) / (a + b) (0 when both are 0), standardised over the votes
(mean 0, standard deviation 1), and the model is

    P(a beats b) = σ(ln(10) (r_a - r_b) + θ · x),        rating_i = 400 r_i + 1000

fitted jointly by L-BFGS on every vote (ties and both-bad count as half a win, as in
:mod:`.bradley_terry`). θ says how much a standard deviation of each style difference
moves the odds; the ratings are what is left once style is held equal. Intervals are the
sandwich (robust) ones of ``arena-rank``: cov = H⁺ B H⁺ over all parameters, the
pseudo-inverse taken on the subspace where the ratings are centred.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize
from scipy.sparse import csr_matrix, hstack
from scipy.special import expit, log_expit, ndtri

from ._blas import single_threaded
from .bradley_terry import BASE, INIT_RATING, SCALE
from .outcomes import BT_LABELS, check_codes

STYLE_ELEMENTS = ("tokens", "headers", "lists", "bold")
L2 = 1e-6  # per vote: keeps the optimum finite for a model that won every vote


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
    x = np.asarray(features, dtype=float).reshape(a.size, -1)
    n_votes, k = x.shape
    alpha = math.log(BASE)
    rows = np.repeat(np.arange(n_votes), 2)
    cols = np.column_stack([a, b]).ravel()
    signs = np.tile([alpha, -alpha], n_votes)
    design = hstack([csr_matrix((signs, (rows, cols)), shape=(n_votes, n_models)),
                     csr_matrix(x)]).tocsr()
    lam = L2 * n_votes
    penalty = np.r_[np.ones(n_models), np.zeros(k)]

    def loss_and_grad(params: np.ndarray) -> tuple[float, np.ndarray]:
        z = design @ params
        loss = -(y * log_expit(z) + (1 - y) * log_expit(-z)).sum()
        loss += 0.5 * lam * np.sum(penalty * params**2)
        grad = -(design.T @ (y - expit(z))) + lam * penalty * params
        return float(loss), grad

    result = minimize(loss_and_grad, np.zeros(n_models + k), jac=True, method="L-BFGS-B",
                      options={"maxiter": 1000, "gtol": 1e-9, "ftol": 1e-14})
    params = result.x
    params[:n_models] -= params[:n_models].mean()
    cov = _sandwich(design, y, params, n_models)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    z95 = float(ndtri(0.5 + confidence / 2))
    r, r_se = params[:n_models], se[:n_models]
    theta, theta_se = params[n_models:], se[n_models:]
    return StyleResult(
        SCALE * r + INIT_RATING, SCALE * (r - z95 * r_se) + INIT_RATING,
        SCALE * (r + z95 * r_se) + INIT_RATING,
        theta, theta - z95 * theta_se, theta + z95 * theta_se,
    )


def _sandwich(design, y: np.ndarray, params: np.ndarray, n_models: int) -> np.ndarray:
    """H⁺ B H⁺ with H the Hessian and B the outer products of per-vote scores; the
    pseudo-inverse ignores the direction that moves every rating together."""
    p = expit(design @ params)
    h = (design.T @ design.multiply((p * (1 - p))[:, None])).toarray()
    scores = design.multiply((y - p)[:, None])
    meat = (scores.T @ scores).toarray()
    # Project out the all-ratings direction (ratings are only defined up to a constant).
    basis = np.eye(h.shape[0])
    basis[:n_models, :n_models] -= 1.0 / n_models
    h_inv = np.linalg.pinv(basis @ h @ basis, hermitian=True)
    return h_inv @ meat @ h_inv

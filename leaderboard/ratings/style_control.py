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
from scipy.special import expit, log_expit, ndtri

from ._blas import single_threaded
from .bradley_terry import BASE, INIT_RATING, SCALE
from .outcomes import BT_LABELS, check_codes

STYLE_ELEMENTS = ("tokens", "headers", "lists", "bold")
L2 = 1e-6  # per vote, on every parameter: keeps the optimum finite (a model that won every vote)
ALPHA = math.log(BASE)
MAX_NEWTON_STEPS = 100
NEWTON_TOLERANCE = 1e-10
# An element whose difference is (almost) a combination of the models' and the elements
# kept before it (R² > 1 - COLLINEAR) cannot be told apart from them.
COLLINEAR = 1e-6
# Log-odds per standard deviation beyond which the votes split perfectly on an element (its
# estimate runs off to where only the L2 term holds it); real style effects are ~0.1-0.5.
SEPARATED = 5.0

# Why an element is in the fit or not: one code per element of STYLE_ELEMENTS.
FITTED, CONSTANT, CONFOUNDED, SEPARATES = "fitted", "constant", "confounded", "separates"


class StyleResult(NamedTuple):
    ratings: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    coefficients: np.ndarray  # θ, one per style element (0 for one left out of the fit)
    coef_lower: np.ndarray
    coef_upper: np.ndarray
    status: tuple[str, ...]  # per element: FITTED, or why it was left out


def style_features(counts_a: np.ndarray, counts_b: np.ndarray) -> np.ndarray:
    """Standardised normalised differences, one column per style element."""
    a = np.asarray(counts_a)
    b = np.asarray(counts_b)
    out = np.empty(a.shape, dtype=float)
    for j in range(a.shape[1]):  # column by column: a few small temporaries, not 32 MB ones
        column_a, column_b = a[:, j].astype(float), b[:, j].astype(float)
        total = column_a + column_b
        np.subtract(column_a, column_b, out=column_a)
        np.divide(column_a, total, out=column_a, where=total > 0)
        column_a[total <= 0] = 0.0  # both 0: no difference
        column_a -= column_a.mean()
        sd = column_a.std()
        out[:, j] = column_a / sd if sd > 0 else 0.0
    return out


@single_threaded()
def fit_style_controlled(a_idx: np.ndarray, b_idx: np.ndarray, outcome: np.ndarray,
                         features: np.ndarray, n_models: int, *,
                         confidence: float = 0.95) -> StyleResult:
    """Style-controlled ratings (mean 1000) and style coefficients, with sandwich intervals.

    Never fails on a small or degenerate vote set: an element the votes cannot estimate
    leaves the fit (its coefficient 0, its ``status`` says why) and the ratings are fitted
    without it, down to the plain Bradley–Terry fit when no element is left:

    * ``CONSTANT``: no vote has a difference in it (nothing to learn from);
    * ``CONFOUNDED``: its differences are those of the models (or of the elements kept
      before it), so its effect cannot be told apart from theirs (two votes between the
      same two models, say);
    * ``SEPARATES``: the votes split perfectly on it, so its estimate has no finite value.
    """
    a = np.asarray(a_idx, dtype=np.int64)
    b = np.asarray(b_idx, dtype=np.int64)
    y = BT_LABELS[check_codes(outcome)]
    x_all = np.asarray(features, dtype=float).reshape(a.size, -1)
    status = [CONSTANT if not np.any(x_all[:, j] != 0) else FITTED
              for j in range(x_all.shape[1])]
    for j in _confounded(a, b, x_all, n_models, [j for j, s in enumerate(status)
                                                  if s == FITTED]):
        status[j] = CONFOUNDED
    while True:
        kept = np.array([j for j, s in enumerate(status) if s == FITTED], dtype=np.int64)
        design = _Design(a, b, x_all[:, kept], n_models)
        params = _newton(design, y, n_models)
        runaway = kept[np.abs(params[n_models:]) > SEPARATED]
        if runaway.size == 0:
            break
        for j in runaway:
            status[j] = SEPARATES
    params[:n_models] -= params[:n_models].mean()
    se = _sandwich_se(design, y, params, n_models)
    z95 = float(ndtri(0.5 + confidence / 2))
    r, r_se = params[:n_models], se[:n_models]
    theta, theta_se = np.zeros(x_all.shape[1]), np.zeros(x_all.shape[1])
    theta[kept], theta_se[kept] = params[n_models:], se[n_models:]
    return StyleResult(
        SCALE * r + INIT_RATING, SCALE * (r - z95 * r_se) + INIT_RATING,
        SCALE * (r + z95 * r_se) + INIT_RATING,
        theta, theta - z95 * theta_se, theta + z95 * theta_se, tuple(status),
    )


def _confounded(a: np.ndarray, b: np.ndarray, x: np.ndarray, n_models: int,
                candidates: list[int]) -> list[int]:
    """The candidate elements whose differences are (almost) a combination of the models'
    columns and of the candidates kept before them: the Schur complement of the models'
    block of the unweighted Gram matrix, reduced element by element (pivoted Cholesky in
    the elements' own order)."""
    if not candidates:
        return []
    gram = _Design(a, b, x[:, candidates], n_models).gram(np.ones(a.size))
    m = n_models
    cross = gram[:m, m:]
    rest = gram[m:, m:] - cross.T @ np.linalg.pinv(gram[:m, :m], hermitian=True) @ cross
    dropped: list[int] = []
    kept: list[int] = []
    for i, j in enumerate(candidates):
        left = rest[i, i]
        if kept:
            inner = rest[np.ix_(kept, kept)]
            left -= rest[i, kept] @ np.linalg.solve(inner, rest[kept, i])
        if left > COLLINEAR * gram[m + i, m + i]:
            kept.append(i)
        else:
            dropped.append(j)
    return dropped


def _newton(design: _Design, y: np.ndarray, n_models: int) -> np.ndarray:
    """Minimise the penalised loss by Newton's method, halving a step that does not lower
    it (pure Newton can overshoot where the loss is nearly flat); the L2 term on every
    parameter keeps the Hessian positive definite, so each step has a solution."""
    votes = y.size
    params = np.zeros(n_models + design.k)
    penalty = np.full(params.size, L2 * max(votes, 1))
    p, residual, weight = (np.empty(votes) for _ in range(3))
    loss = design.loss(params, y, penalty)
    for _ in range(MAX_NEWTON_STEPS):
        design.probabilities(params, out=p)
        np.subtract(y, p, out=residual)
        grad = -design.transpose_times(residual) + penalty * params
        np.subtract(1.0, p, out=weight)
        weight *= p
        hessian = design.gram(weight)
        hessian[np.diag_indices_from(hessian)] += penalty
        step = np.linalg.solve(hessian, grad)
        for _halving in range(30):
            trial = params - step
            trial_loss = design.loss(trial, y, penalty)
            if trial_loss <= loss + 1e-12 * abs(loss):
                break
            step = step / 2
        params, loss = trial, trial_loss
        if np.abs(step).max() < NEWTON_TOLERANCE:
            break
    return params


def _sandwich_se(design: _Design, y: np.ndarray, params: np.ndarray,
                 n_models: int) -> np.ndarray:
    """Standard errors from H⁺ B H⁺, H the Hessian and B the outer products of per-vote
    scores; the pseudo-inverse ignores the direction that moves every rating together."""
    p = design.probabilities(params, out=np.empty(y.size))
    h = design.gram(p * (1.0 - p))
    meat = design.gram((y - p) ** 2)
    basis = np.eye(h.shape[0])
    basis[:n_models, :n_models] -= 1.0 / n_models
    h_inv = np.linalg.pinv(basis @ h @ basis, hermitian=True)
    cov = h_inv @ meat @ h_inv
    return np.sqrt(np.clip(np.diag(cov), 0, None))


class _Design:
    """The design matrix D (row i: α on a_i, −α on b_i, then the style features x_i),
    never built: what the fit needs of it comes from per-pair and per-model sums, in
    buffers allocated once (a million votes cost a few passes, not a sparse product)."""

    def __init__(self, a: np.ndarray, b: np.ndarray, x: np.ndarray, n_models: int) -> None:
        self.a, self.b, self.n = a, b, n_models
        self.pair = a * n_models + b
        self.xt = np.ascontiguousarray(x.T)  # (k, votes): one row per style element
        self.k = self.xt.shape[0]
        self.buffer = np.empty(a.size)

    def loss(self, params: np.ndarray, y: np.ndarray, penalty: np.ndarray) -> float:
        """The penalised negative log-likelihood."""
        z = ALPHA * (params[self.a] - params[self.b])
        if self.k:
            z += params[self.n:] @ self.xt
        nll = -(y * log_expit(z) + (1.0 - y) * log_expit(-z)).sum()
        return float(nll + 0.5 * (penalty * params * params).sum())

    def probabilities(self, params: np.ndarray, *, out: np.ndarray) -> np.ndarray:
        r, theta = params[:self.n], params[self.n:]
        np.take(r, self.a, out=out)
        out -= np.take(r, self.b, out=self.buffer)
        out *= ALPHA
        if theta.size:
            out += np.dot(theta, self.xt, out=self.buffer)
        return expit(out, out=out)

    def transpose_times(self, weights: np.ndarray) -> np.ndarray:
        """Dᵀ·weights."""
        per_model = ALPHA * (np.bincount(self.a, weights, self.n)
                             - np.bincount(self.b, weights, self.n))
        return np.r_[per_model, self.xt @ weights]

    def gram(self, weights: np.ndarray) -> np.ndarray:
        """Dᵀ diag(weights) D."""
        n, k = self.n, self.xt.shape[0]
        out = np.empty((n + k, n + k))
        pairs = np.bincount(self.pair, weights, n * n).reshape(n, n)
        pairs = pairs + pairs.T
        out[:n, :n] = -ALPHA**2 * pairs
        out[np.arange(n), np.arange(n)] = ALPHA**2 * pairs.sum(axis=1)
        for j in range(k):
            np.multiply(self.xt[j], weights, out=self.buffer)
            column = ALPHA * (np.bincount(self.a, self.buffer, n)
                              - np.bincount(self.b, self.buffer, n))
            out[:n, n + j] = column
            out[n + j, :n] = column
            out[n:, n + j] = self.xt @ self.buffer
        return out

"""Bradley–Terry ratings by maximum likelihood, with bootstrap and sandwich intervals.

Model (Bradley & Terry, *Biometrika* 39, 1952) on the Elo scale, as in FastChat's
``compute_bt`` (``fastchat/serve/monitor/rating_systems.py``)::

    P(a beats b) = σ(ln(10) * (r_a - r_b)),        rating_i = 400 * r_i + 1000

    loss(r) = -Σ_rows w * [y log σ(d) + (1 - y) log(1 - σ(d))] + ½ λ |r|²,
    d = ln(10) * (r_a - r_b),  y = 1 (a won), 0 (b won), ½ (tie or both bad)

fitted by L-BFGS (``scipy.optimize.minimize``, analytic gradient) on the votes grouped by
(pair, outcome) with weights w = counts.  Ties and both-bad votes count as half a win
each (zero-sum).  The loss is linear in y, so rows of one unordered pair collapse exactly
to two sufficient statistics (votes, a's wins); the fit costs O(distinct pairs) per
evaluation whatever the number of votes.

Ratings are centred: with no anchor model the mean rating is 1000.  Models that cannot be
compared (separate components of the graph of compared pairs) are centred separately, so
a model without votes gets exactly 1000.  λ is a tiny L2 term (per vote) that keeps the
optimum finite when a model won or lost every game; its effect on real data is far below
0.01 points.  The fit runs to a tight gradient tolerance; FastChat's ``compute_bt`` stops
earlier (L-BFGS-B's relative-reduction test on the unnormalised loss, ~19 iterations on
the 140k release), so its published values differ from the exact optimum by up to ~0.3
points per model and ~0.06 points in the gaps between the top models.

Intervals (95 % by default):

* :func:`bootstrap_bradley_terry` — FastChat's multinomial bootstrap on the grouped counts
  (each round draws counts ~ Multinomial(total, counts / total) and refits, warm-started
  from the point estimate); bounds are the 2.5 / 97.5 percentiles.
* :func:`sandwich_bradley_terry` — the robust (Huber–White) covariance used by LMArena's
  ``arena-rank``: cov = H⁺ B H⁺ with H the Hessian of the loss at the optimum and
  B = Σ_rows w g gᵀ the grouped outer products of per-vote scores; H⁺ is the
  pseudo-inverse on the centred subspace (ratings are only defined up to a constant).
  Bounds are rating ± z * sqrt(diag(cov)).

"Rank (UB)" (FastChat): rank_i = 1 + #{j : lower_j > upper_i}.

The public functions run OpenBLAS single-threaded (see :mod:`._blas`): the optimiser makes
thousands of tiny BLAS calls for which worker threads only add latency.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import log_expit, ndtri

from ._blas import single_threaded
from .outcomes import BT_LABELS, check_codes

SCALE = 400.0
BASE = 10.0
INIT_RATING = 1000.0
L2_REG = 1e-9


class BTResult(NamedTuple):
    """Ratings with interval bounds and FastChat's Rank (UB), indexed like the model list."""

    ratings: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    rank_ub: np.ndarray


class _Grouped(NamedTuple):
    """Votes grouped by (unordered pair, label); pairs stored with lo < hi."""

    n: int
    lo: np.ndarray  # per row
    hi: np.ndarray
    y: np.ndarray  # share of a win credited to ``lo``: 0, 0.5 or 1
    w: np.ndarray  # vote count of the row
    row_pair: np.ndarray  # row -> pair index
    pair_lo: np.ndarray  # per pair
    pair_hi: np.ndarray


def _group(a_idx, b_idx, outcome, count, n_models: int) -> _Grouped:
    a = np.asarray(a_idx, dtype=np.int64)
    b = np.asarray(b_idx, dtype=np.int64)
    codes = check_codes(outcome)
    w = np.asarray(count, dtype=np.float64)
    if not (a.shape == b.shape == codes.shape == w.shape) or a.ndim != 1:
        raise ValueError("a_idx, b_idx, outcome and count must be 1-d arrays of one length")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n_models):
        raise ValueError(f"model indices must lie in 0..{n_models - 1}")
    if np.any(a == b):
        raise ValueError("a model cannot be compared with itself (a_idx == b_idx)")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("counts must be finite and non-negative")
    y = BT_LABELS[codes]
    swap = a > b
    lo = np.where(swap, b, a)
    hi = np.where(swap, a, b)
    y2 = np.rint(np.where(swap, 1.0 - y, y) * 2.0).astype(np.int64)  # 0, 1, 2
    keys, inv = np.unique((lo * n_models + hi) * 3 + y2, return_inverse=True)
    weights = np.bincount(inv, weights=w, minlength=keys.size)
    pair_keys, row_pair = np.unique(keys // 3, return_inverse=True)
    return _Grouped(
        n=n_models,
        lo=keys // 3 // n_models,
        hi=keys // 3 % n_models,
        y=(keys % 3) / 2.0,
        w=weights,
        row_pair=row_pair,
        pair_lo=pair_keys // n_models,
        pair_hi=pair_keys % n_models,
    )


def _pair_stats(g: _Grouped, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Collapse row weights to per-pair (votes, wins of ``lo``)."""
    n_pairs = g.pair_lo.size
    votes = np.bincount(g.row_pair, weights=w, minlength=n_pairs)
    wins = np.bincount(g.row_pair, weights=w * g.y, minlength=n_pairs)
    return votes, wins


def _components(g: _Grouped, votes: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of the graph of pairs with votes (a model without any is alone)."""
    used = votes > 0
    graph = coo_matrix((np.ones(used.sum()), (g.pair_lo[used], g.pair_hi[used])), (g.n, g.n))
    return connected_components(graph, directed=False)


def _fit_raw(
    g: _Grouped,
    votes: np.ndarray,
    wins: np.ndarray,
    *,
    alpha: float,
    reg: float,
    tol: float,
    x0: np.ndarray | None = None,
    components: tuple[int, np.ndarray] | None = None,
) -> np.ndarray:
    """Minimise the (per-vote) loss; return centred ratings in base-``base`` logit units."""
    n = g.n
    total = votes.sum()
    if total <= 0:
        return np.zeros(n)
    votes = votes / total
    wins = wins / total
    lo, hi = g.pair_lo, g.pair_hi
    h_diag = 0.25 * alpha * alpha * (np.bincount(lo, votes, n) + np.bincount(hi, votes, n))
    # The likelihood ignores a common shift of the ratings of each connected component of
    # the comparison graph; the gauge term ½ γ Σ_c n_c mean_c(r)² (γ ≈ the typical
    # curvature) pins each component's mean at 0 without touching any difference within
    # it.  A model without votes is a component of its own and stays at 0.
    n_comp, comp = components if components is not None else _components(g, votes)
    comp_size = np.bincount(comp, minlength=n_comp).astype(np.float64)
    gamma = float(h_diag.mean()) + reg
    # Diagonal preconditioning: optimise u = r / s with s_i = 1 / sqrt(H_ii at r = 0).
    s = 1.0 / np.sqrt(h_diag + reg + gamma / comp_size[comp])

    def loss_and_grad(u: np.ndarray) -> tuple[float, np.ndarray]:
        r = u * s
        d = alpha * (r[lo] - r[hi])
        log_q = log_expit(-d)  # log P(hi beats lo)
        mean = np.bincount(comp, r, n_comp) / comp_size
        # -[wins log σ(d) + (votes - wins) log σ(-d)] = -[wins d + votes log σ(-d)]
        # Elementwise sums, not "@": BLAS dot products start threads that cost more than
        # they save on a busy machine.
        penalty = reg * (r * r).sum() + gamma * (comp_size * mean * mean).sum()
        loss = -(wins * d + votes * log_q).sum() + 0.5 * penalty
        gd = alpha * (votes * (1.0 - np.exp(log_q)) - wins)
        grad = np.bincount(lo, gd, n) - np.bincount(hi, gd, n) + reg * r + gamma * mean[comp]
        return float(loss), grad * s

    u0 = np.zeros(n) if x0 is None else x0 / s
    res = minimize(
        loss_and_grad,
        u0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 1000, "gtol": tol, "ftol": 1e-15, "maxcor": 20},
    )
    r = res.x * s
    return r - r.mean()


def _to_rating(r: np.ndarray, *, scale: float, init_rating: float) -> np.ndarray:
    return r * scale + init_rating


@single_threaded()
def fit_bradley_terry(
    a_idx: np.ndarray,
    b_idx: np.ndarray,
    outcome: np.ndarray,
    count: np.ndarray,
    n_models: int,
    *,
    scale: float = SCALE,
    base: float = BASE,
    init_rating: float = INIT_RATING,
    reg: float = L2_REG,
    tol: float = 1e-9,
) -> np.ndarray:
    """Maximum-likelihood Bradley–Terry ratings (mean ``init_rating``), one per model.

    Input rows are (model a, model b, outcome code, number of votes); rows may repeat and
    counts may be 1 (ungrouped votes), but grouping first (see
    :func:`leaderboard.ratings.votes_file.group_outcomes`) keeps the input small.
    """
    g = _group(a_idx, b_idx, outcome, count, n_models)
    votes, wins = _pair_stats(g, g.w)
    r = _fit_raw(g, votes, wins, alpha=math.log(base), reg=reg, tol=tol)
    return _to_rating(r, scale=scale, init_rating=init_rating)


def rank_upper_bound(ci_lower: np.ndarray, ci_upper: np.ndarray) -> np.ndarray:
    """FastChat's "Rank (UB)": 1 + the number of models whose lower bound exceeds my upper one."""
    lower = np.sort(np.asarray(ci_lower, dtype=np.float64))
    upper = np.asarray(ci_upper, dtype=np.float64)
    return 1 + lower.size - np.searchsorted(lower, upper, side="right")


@single_threaded()
def bootstrap_bradley_terry(
    a_idx: np.ndarray,
    b_idx: np.ndarray,
    outcome: np.ndarray,
    count: np.ndarray,
    n_models: int,
    *,
    n_rounds: int = 100,
    seed: int | None = 0,
    level: float = 0.95,
    scale: float = SCALE,
    base: float = BASE,
    init_rating: float = INIT_RATING,
    reg: float = L2_REG,
    tol: float = 1e-9,
    boot_tol: float = 1e-6,
) -> BTResult:
    """Point estimate plus percentile intervals from a multinomial bootstrap on grouped counts.

    Each of ``n_rounds`` rounds (``np.random.default_rng(seed)``) draws new counts for the
    distinct (pair, outcome) rows ~ Multinomial(total votes, counts / total) and refits,
    warm-started from the point estimate.  With ``level`` 0.95 the bounds are the 2.5 and
    97.5 percentiles of the bootstrap ratings.
    """
    g = _group(a_idx, b_idx, outcome, count, n_models)
    alpha = math.log(base)
    votes, wins = _pair_stats(g, g.w)
    point = _fit_raw(g, votes, wins, alpha=alpha, reg=reg, tol=tol)
    total = int(round(g.w.sum()))
    components = _components(g, votes)
    if n_rounds < 1 or total == 0:
        rating = _to_rating(point, scale=scale, init_rating=init_rating)
        return BTResult(rating, rating.copy(), rating.copy(), np.ones(n_models, dtype=np.int64))
    rng = np.random.default_rng(seed)
    p = g.w / g.w.sum()
    samples = np.empty((n_rounds, n_models))
    for i in range(n_rounds):
        draw = rng.multinomial(total, p).astype(np.float64)
        v, s = _pair_stats(g, draw)
        samples[i] = _fit_raw(
            g, v, s, alpha=alpha, reg=reg, tol=boot_tol, x0=point, components=components
        )
    tail = 50.0 * (1.0 - level)
    low, high = np.percentile(samples, [tail, 100.0 - tail], axis=0)
    to = {"scale": scale, "init_rating": init_rating}
    lower, upper = _to_rating(low, **to), _to_rating(high, **to)
    return BTResult(_to_rating(point, **to), lower, upper, rank_upper_bound(lower, upper))


def _laplacian(n: int, i: np.ndarray, j: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Σ v (e_i - e_j)(e_i - e_j)ᵀ as a dense n × n matrix."""
    m = np.bincount(i * n + i, v, n * n) + np.bincount(j * n + j, v, n * n)
    m -= np.bincount(i * n + j, v, n * n) + np.bincount(j * n + i, v, n * n)
    return m.reshape(n, n)


def _sandwich_covariance(g: _Grouped, r: np.ndarray, *, alpha: float) -> np.ndarray:
    """Robust covariance H⁺ B H⁺ of the centred raw ratings ``r`` (base-logit units)."""
    d = alpha * (r[g.lo] - r[g.hi])
    p = np.exp(log_expit(d))
    hess = _laplacian(g.n, g.lo, g.hi, g.w * p * (1.0 - p) * alpha**2)
    meat = _laplacian(g.n, g.lo, g.hi, g.w * (g.y - p) ** 2 * alpha**2)
    # Ratings are identified up to an additive constant: H (a weighted graph Laplacian) is
    # singular along the all-ones vector.  Its pseudo-inverse inverts H on the centred
    # subspace, which is the covariance of ratings whose mean is fixed.
    h_pinv = np.linalg.pinv(hess, hermitian=True)
    return h_pinv @ meat @ h_pinv


@single_threaded()
def sandwich_bradley_terry(
    a_idx: np.ndarray,
    b_idx: np.ndarray,
    outcome: np.ndarray,
    count: np.ndarray,
    n_models: int,
    *,
    level: float = 0.95,
    scale: float = SCALE,
    base: float = BASE,
    init_rating: float = INIT_RATING,
    reg: float = L2_REG,
    tol: float = 1e-9,
) -> BTResult:
    """Point estimate plus normal intervals from the sandwich (robust) covariance.

    Bounds are rating ± z * scale * sqrt(diag(H⁺ B H⁺)), z = Φ⁻¹(1 - (1 - level) / 2)
    (1.96 for 95 %).  Models without any vote keep ``init_rating`` with zero width: leave
    them off a leaderboard.
    """
    g = _group(a_idx, b_idx, outcome, count, n_models)
    alpha = math.log(base)
    votes, wins = _pair_stats(g, g.w)
    r = _fit_raw(g, votes, wins, alpha=alpha, reg=reg, tol=tol)
    cov = _sandwich_covariance(g, r, alpha=alpha)
    half = float(ndtri(0.5 + level / 2.0)) * scale * np.sqrt(np.clip(np.diag(cov), 0, None))
    rating = _to_rating(r, scale=scale, init_rating=init_rating)
    lower, upper = rating - half, rating + half
    return BTResult(rating, lower, upper, rank_upper_bound(lower, upper))

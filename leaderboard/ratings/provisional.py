"""Sane numbers for models with too few votes: a weak Gaussian prior, the others held fixed.

A Bradley–Terry maximum-likelihood rating is meaningless on a handful of votes: one win is
an infinite rating held back only by the tiny L2 term (one panel vote gave 2735 against
−735), and since ratings are centred on their mean, that swing moved every other model too.

Here a *provisional* model (fewer votes than the board's minimum) is reported as its
maximum a posteriori rating under the prior

    rating ~ Normal(1000, PRIOR_SD²),   PRIOR_SD = 200 Elo points

given its own votes against opponents whose ratings are held at their estimates (two
provisional opponents are solved in turns until they agree), with a Laplace interval
(rating ± z / sqrt(curvature)). With no information a model sits at 1000 ± 392; one win
against an equal opponent gives about 1087 ± 342; fifty votes are worth far more than the
prior. Models at or above the minimum keep their maximum-likelihood ratings; all ratings
are re-centred so that those models, not the provisional ones, average 1000 (with none
provisional nothing moves).
"""

from __future__ import annotations

import numpy as np

from .outcomes import BT_LABELS

PRIOR_MEAN = 1000.0
PRIOR_SD = 200.0
K = np.log(10.0) / 400.0  # P(a beats b) = σ(K (r_a - r_b)), ratings in Elo points
_SWEEPS = 20
_NEWTON_STEPS = 30


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def shrink_provisional(
    rating: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    code: np.ndarray,
    count: np.ndarray,
    provisional: np.ndarray,
    *,
    z: float = 1.959963984540054,
    prior_sd: float = PRIOR_SD,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rating, lower, upper) with every ``provisional`` model shrunk toward the prior.

    ``a``, ``b``, ``code`` and ``count`` are the grouped votes (see :mod:`.outcomes`).
    """
    rating, lower, upper = (np.asarray(x, dtype=float).copy() for x in (rating, lower, upper))
    provisional = np.asarray(provisional, dtype=bool)
    if not provisional.any():
        return rating, lower, upper
    settled = ~provisional
    if settled.any():
        shift = PRIOR_MEAN - rating[settled].mean()
        rating += shift
        lower += shift
        upper += shift
    rating[provisional] = PRIOR_MEAN
    score_a = BT_LABELS[code]  # a's share of each row's votes
    weight = np.asarray(count, dtype=float)
    precision = 1.0 / prior_sd**2
    curvature = np.full(rating.size, precision)
    for _ in range(_SWEEPS):
        before = rating[provisional].copy()
        for i in np.flatnonzero(provisional):
            rating[i], curvature[i] = _map_rating(i, rating, a, b, score_a, weight, precision)
        if np.max(np.abs(rating[provisional] - before)) < 1e-6:
            break
    half = z / np.sqrt(curvature[provisional])
    lower[provisional] = rating[provisional] - half
    upper[provisional] = rating[provisional] + half
    return rating, lower, upper


def _map_rating(i: int, rating: np.ndarray, a: np.ndarray, b: np.ndarray, score_a: np.ndarray,
                weight: np.ndarray, precision: float) -> tuple[float, float]:
    """Newton's method on one model's log posterior (concave); its maximum and curvature."""
    as_a, as_b = a == i, b == i
    opponents = np.concatenate([rating[b[as_a]], rating[a[as_b]]])
    scores = np.concatenate([score_a[as_a], 1.0 - score_a[as_b]])
    w = np.concatenate([weight[as_a], weight[as_b]])
    r = rating[i]
    for _ in range(_NEWTON_STEPS):
        p = _sigmoid(K * (r - opponents))
        gradient = K * np.sum(w * (scores - p)) - precision * (r - PRIOR_MEAN)
        curvature = K * K * np.sum(w * p * (1.0 - p)) + precision
        step = gradient / curvature
        r += step
        if abs(step) < 1e-9:
            break
    p = _sigmoid(K * (r - opponents))
    return float(r), float(K * K * np.sum(w * p * (1.0 - p)) + precision)

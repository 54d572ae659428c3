"""Which pair of models should meet next: the probability of each pair per strategy.

* ``uniform`` (seed 000): every pair equally likely.
* ``fewer_votes``: each model drawn with weight 1 / sqrt(1 + its votes), so new models
  catch up (the pair's weight is the product of its two models' weights).
* ``partner``: one model drawn uniformly, then its partner uniformly among those it may meet
  (voice battles: an agent of another provider).
* ``informative``: pairs where one vote teaches the most. A vote on the pair (i, j) is a
  Bernoulli observation of the difference d = r_i - r_j with Fisher information
  I = k² p (1 - p) (k = ln 10 / 400, p the predicted chance that i wins); with the
  difference's current variance v = se_i² + se_j², one vote shrinks it by

      v - 1 / (1 / v + I) = v² I / (1 + v I)

  which is largest for close ratings (p near ½) and wide intervals. Half the draws
  (``ORDER_SHARE``) weight that gain by the chance the board has the two in the wrong
  order, Φ(-|d| / sqrt(v)), which settles the ranking sooner; the other half by the gain
  alone, which keeps every interval narrowing. Two guards keep the board honest: a
  **floor** mixes in the uniform distribution (share ``floor``, default 0.1), so every
  pair keeps a chance and a wrong estimate can still be corrected; a **cap** keeps each
  model's share of battles at most ``cap`` times its uniform share (2 / n; default 3),
  so no model is over-shown.

All functions return a symmetric matrix P with a zero diagonal whose upper triangle sums
to 1 (P[i, j] = P[j, i] = the chance that i and j meet).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erfc

K = math.log(10.0) / 400.0
FLOOR = 0.1
CAP = 3.0
ORDER_SHARE = 0.5


def _normalised(weights: np.ndarray) -> np.ndarray:
    w = np.triu(weights, 1)
    total = w.sum()
    if total <= 0:
        w = np.triu(np.ones_like(weights), 1)
        total = w.sum()
    w = w / total
    return w + w.T


def uniform_pairs(n: int) -> np.ndarray:
    return _normalised(np.ones((n, n)))


def fewer_votes_pairs(votes: np.ndarray) -> np.ndarray:
    weight = 1.0 / np.sqrt(1.0 + np.asarray(votes, dtype=float))
    return _normalised(np.outer(weight, weight))


def partner_pairs(allowed: np.ndarray) -> np.ndarray:
    """One model drawn uniformly, then its partner uniformly among those ``allowed[i]``
    marks (any other model for one that may meet none): the chance of each pair."""
    allowed = np.asarray(allowed, dtype=bool)
    n = allowed.shape[0]
    others = ~np.eye(n, dtype=bool)
    allowed = allowed & others
    alone = ~allowed.any(axis=1)
    allowed[alone] = others[alone]
    partner = allowed / allowed.sum(axis=1, keepdims=True)
    return (partner + partner.T) / n


def informative_pairs(rating: np.ndarray, se: np.ndarray, *, floor: float = FLOOR,
                      cap: float = CAP) -> np.ndarray:
    """Pair probabilities by the variance one vote removes (half of them weighted by the
    doubt about the pair's order), with a floor and a cap."""
    rating = np.asarray(rating, dtype=float)
    se = np.asarray(se, dtype=float)
    n = rating.size
    if n < 2:
        raise ValueError("at least two models are needed")
    p = 1.0 / (1.0 + np.exp(-K * (rating[:, None] - rating[None, :])))
    info = K * K * p * (1.0 - p)
    var = se[:, None] ** 2 + se[None, :] ** 2
    gain = var * var * info / (1.0 + var * info)  # variance of the difference removed
    # The chance that the board has the two the wrong way round, Φ(-|d| / sqrt(v)).
    doubt = 0.5 * erfc(np.abs(rating[:, None] - rating[None, :]) / np.sqrt(2.0 * var))
    informative = (ORDER_SHARE * _normalised(gain * doubt)
                   + (1 - ORDER_SHARE) * _normalised(gain))
    probs = (1.0 - floor) * informative + floor * uniform_pairs(n)
    return _capped(probs, cap * 2.0 / n)


def _capped(probs: np.ndarray, limit: float, rounds: int = 200) -> np.ndarray:
    """Scale down the pairs of any model whose share of battles exceeds ``limit``."""
    for _ in range(rounds):
        share = probs.sum(axis=1)  # each model's chance of being in the next battle
        over = share > limit * (1 + 1e-9)
        if not over.any():
            break
        scale = np.where(over, limit / share, 1.0)
        probs = _normalised(probs * np.sqrt(np.outer(scale, scale)))
    return probs


def draw_pair(probs: np.ndarray, rng: np.random.Generator) -> tuple[int, int]:
    """One pair drawn from a matrix of :func:`uniform_pairs` and the like (i < j)."""
    i, j = np.triu_indices(probs.shape[0], 1)
    k = rng.choice(i.size, p=probs[i, j] / probs[i, j].sum())
    return int(i[k]), int(j[k])

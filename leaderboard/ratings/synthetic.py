"""Synthetic votes drawn from known Bradley–Terry ratings (for tests and benchmarks).

Generative model: every vote picks an unordered pair of distinct models uniformly and a
random side order.  With P = σ(ln(10) (R_a - R_b) / 400) and m = 2 min(P, 1 - P) (1 for
an even match, → 0 for a mismatch) the vote is a tie with probability ``tie_rate * m``, a
both-bad vote with probability ``both_bad_rate * m``, and otherwise a win for a or b, the
win probabilities being reduced by the same amount each.  Hence the expected label
E[y] = P(a wins) + ½ P(tie or both bad) = P exactly, so the Bradley–Terry MLE (which counts
ties and both-bad votes as half a win each) is consistent for the true ratings.

Everything is drawn already grouped — one multinomial per (ordered pair), never one
random number per vote — so ten million votes cost a few milliseconds.
"""

from __future__ import annotations

import numpy as np

from .outcomes import A_WINS, B_WINS, BOTH_BAD, TIE


def simulate_grouped_votes(
    true_ratings: np.ndarray,
    n_votes: int,
    *,
    rng: np.random.Generator,
    tie_rate: float = 0.15,
    both_bad_rate: float = 0.10,
    scale: float = 400.0,
    base: float = 10.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return grouped votes ``(a_idx, b_idx, outcome, count)``; counts sum to ``n_votes``.

    Rows with a zero count are dropped.
    """
    ratings = np.asarray(true_ratings, dtype=np.float64)
    n = ratings.size
    if n < 2:
        raise ValueError("need at least two models")
    if tie_rate < 0 or both_bad_rate < 0 or tie_rate + both_bad_rate > 1:
        raise ValueError("tie_rate and both_bad_rate must be non-negative and sum to <= 1")
    lo, hi = np.triu_indices(n, k=1)
    per_pair = rng.multinomial(n_votes, np.full(lo.size, 1.0 / lo.size))
    forward = rng.binomial(per_pair, 0.5)  # votes shown as (lo, hi); the rest as (hi, lo)
    a = np.concatenate([lo, hi])
    b = np.concatenate([hi, lo])
    n_ab = np.concatenate([forward, per_pair - forward])
    p_a = 1.0 / (1.0 + base ** ((ratings[b] - ratings[a]) / scale))
    probs = np.empty((a.size, 4))
    even = 2.0 * np.minimum(p_a, 1.0 - p_a)
    probs[:, TIE] = tie_rate * even
    probs[:, BOTH_BAD] = both_bad_rate * even
    half_draw = 0.5 * (tie_rate + both_bad_rate) * even
    probs[:, A_WINS] = p_a - half_draw
    probs[:, B_WINS] = (1.0 - p_a) - half_draw
    counts = rng.multinomial(n_ab, probs)  # shape (rows, 4)
    rows, outcome = np.nonzero(counts)
    return a[rows], b[rows], outcome.astype(np.int64), counts[rows, outcome]

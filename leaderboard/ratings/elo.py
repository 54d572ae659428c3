"""Online Elo ratings, applied vote by vote in the order the votes were cast.

Formula (Elo, *The Rating of Chessplayers, Past and Present*, 1978; the logistic form
used by FIDE and by LMArena's early leaderboards)::

    E_a = 1 / (1 + 10 ** ((R_b - R_a) / 400))      E_b = 1 - E_a
    R_a' = R_a + K * (S_a - E_a)                    R_b' = R_b + K * (S_b - E_b)

with K = 32 and every model starting at 1500.  The scores ``(S_a, S_b)`` come from
:data:`leaderboard.ratings.outcomes.ELO_SCORES`: a win is 1/0, a tie 0.5/0.5 and a
"both are bad" vote 0.25/0.25 — the latter is *not* zero-sum on purpose: both models lose
points (from equal ratings each drops by 32 * (0.25 - 0.5) = 8).
"""

from __future__ import annotations

import math

import numpy as np

from .outcomes import ELO_SCORES, check_codes

K_FACTOR = 32.0
INITIAL_RATING = 1500.0
SCALE = 400.0
BASE = 10.0


def expected_score(r_a: float, r_b: float, *, scale: float = SCALE, base: float = BASE) -> float:
    """Expected score of a player rated ``r_a`` against one rated ``r_b``."""
    return 1.0 / (1.0 + base ** ((r_b - r_a) / scale))


def elo_update(
    r_a: float, r_b: float, score_a: float, score_b: float, k: float = K_FACTOR
) -> tuple[float, float]:
    """One Elo update: return the new ``(r_a, r_b)`` after a game scored ``score_a``/``score_b``.

    >>> elo_update(1500, 1500, 1, 0)
    (1516.0, 1484.0)
    """
    e_a = expected_score(r_a, r_b)
    return r_a + k * (score_a - e_a), r_b + k * (score_b - (1.0 - e_a))


def elo_ratings(
    a_idx: np.ndarray,
    b_idx: np.ndarray,
    outcome: np.ndarray,
    n_models: int,
    *,
    k: float = K_FACTOR,
    initial: float | np.ndarray = INITIAL_RATING,
) -> np.ndarray:
    """Replay votes in order and return the final Elo rating of each of ``n_models`` models.

    ``a_idx``/``b_idx`` are model indices and ``outcome`` the codes of
    :mod:`leaderboard.ratings.outcomes`, one entry per vote, in vote order.  ``initial``
    is the starting rating, a scalar or one value per model (to continue from stored
    ratings).  Online Elo is sequential by nature, so this is a plain loop over Python
    floats (about a microsecond per vote).
    """
    a = np.asarray(a_idx, dtype=np.int64)
    b = np.asarray(b_idx, dtype=np.int64)
    codes = check_codes(outcome)
    if not (a.shape == b.shape == codes.shape):
        raise ValueError("a_idx, b_idx and outcome must have the same length")
    start = np.broadcast_to(np.asarray(initial, dtype=np.float64), (n_models,))
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n_models):
        raise ValueError(f"model indices must lie in 0..{n_models - 1}")
    ratings = start.tolist()
    scores = ELO_SCORES[codes]
    c = math.log(BASE) / SCALE
    exp = math.exp
    for i, j, (s_a, s_b) in zip(a.tolist(), b.tolist(), scores.tolist(), strict=True):
        r_i = ratings[i]
        r_j = ratings[j]
        e_a = 1.0 / (1.0 + exp(c * (r_j - r_i)))
        ratings[i] = r_i + k * (s_a - e_a)
        ratings[j] = r_j + k * (s_b - (1.0 - e_a))
    return np.array(ratings, dtype=np.float64)

"""Which two of a mode's candidates meet: one picker, each mode's rule a parameter.

A rule gives the chance of each pair of candidates meeting, as a symmetric matrix with a
zero diagonal (the shapes :mod:`leaderboard.ratings.pairing` makes): the text battles weigh
pairs as ``ARENA_BATTLE_SELECTION`` says, the voice battles pair agents of two providers.
Without a rule every pair is alike. A side someone chose keeps its candidate (a debate's
named model) and the other side is drawn among the pairs that candidate is in; otherwise
which of the two is side A is drawn as well.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import TypeVar

import numpy as np

from leaderboard.ratings.pairing import draw_pair, uniform_pairs

T = TypeVar("T")
PairRule = Callable[[list], np.ndarray]

NOT_TWO = "At least two candidates are needed for a pair."
NOT_A_CANDIDATE = "The chosen side is not one of the candidates."


def pair_pick(candidates: Iterable[T], *, rule: PairRule | None = None,
              chosen: tuple[T | None, T | None] = (None, None),
              rng: random.Random | None = None) -> tuple[T, T]:
    """Two different candidates as ``(side A, side B)``: drawn by ``rule`` (every pair
    alike without one), except a side ``chosen`` names."""
    rng = rng or random.SystemRandom()
    pool = list(candidates)
    if len(pool) < 2:
        raise ValueError(NOT_TWO)
    first, second = chosen
    if first is not None and second is not None:
        return first, second
    named = first if first is not None else second
    if rule is None and named is None:
        a, b = rng.sample(pool, 2)
        return a, b
    probs = uniform_pairs(len(pool)) if rule is None else rule(pool)
    if named is not None:
        if named not in pool:
            raise ValueError(NOT_A_CANDIDATE)
        has = np.array([candidate == named for candidate in pool])
        probs = probs * (has[:, None] | has[None, :])
    i, j = draw_pair(probs, np.random.default_rng(rng.getrandbits(64)))
    a, b = pool[i], pool[j]
    if named is None:
        return (a, b) if rng.random() < 0.5 else (b, a)
    other = b if a == named else a
    return (named, other) if first is not None else (other, named)

"""Which two models meet."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.db.models import Count, Q

from arena.models import AIModel
from battles.boards import TEXT_BOARD
from leaderboard.estimates import board_estimates
from leaderboard.ratings.pairing import draw_pair, fewer_votes_pairs, informative_pairs


def select_models_for_battle(
    candidates: Sequence[AIModel],
    *,
    strategy: str | None = None,
    rng: random.Random | None = None,
) -> tuple[AIModel, AIModel]:
    """Two different models from ``candidates``, in random order.

    ``uniform`` (seed 000): every pair equally likely. ``fewer_votes``: each model drawn
    with weight 1/sqrt(1 + its votes), so new models catch up. ``informative``: pairs where
    a vote teaches the text board the most, with a floor and a cap (see
    :mod:`leaderboard.ratings.pairing`). The caller guarantees at least two candidates.
    """
    rng = rng or random.SystemRandom()
    strategy = strategy or settings.ARENA_BATTLE_SELECTION
    pool = list(candidates)
    if len(pool) < 2:
        raise ValueError("at least two models are needed for a battle")
    if strategy == "uniform":
        first, second = rng.sample(pool, 2)
        return first, second
    slugs = [m.slug for m in pool]
    if strategy == "informative":
        estimates = board_estimates(board=TEXT_BOARD.name, subjects=slugs)
        probs = informative_pairs(np.array([estimates[s][0] for s in slugs]),
                                  np.array([estimates[s][1] for s in slugs]))
    else:
        votes = _vote_counts(slugs)
        probs = fewer_votes_pairs(np.array([votes[s] for s in slugs]))
    i, j = draw_pair(probs, np.random.default_rng(rng.getrandbits(64)))
    return (pool[i], pool[j]) if rng.random() < 0.5 else (pool[j], pool[i])


def _vote_counts(slugs: list[str]) -> dict[str, int]:
    from battles.models import Battle

    counts: dict[str, int] = dict.fromkeys(slugs, 0)
    rows = (
        Battle.objects.filter(vote__isnull=False)
        .filter(Q(model_a__in=slugs) | Q(model_b__in=slugs))
        .values_list("model_a", "model_b")
        .annotate(n=Count("id"))
    )
    for a, b, n in rows:
        for slug in (a, b):
            if slug in counts:
                counts[slug] += n
    return counts

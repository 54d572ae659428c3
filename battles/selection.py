"""Which two models meet in a text battle: the platform's pair picker with the text battles'
rule, ``ARENA_BATTLE_SELECTION``."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.db.models import Count, Q

from arena.contests.pairing import pair_pick
from arena.models import AIModel
from battles.boards import TEXT_BOARD
from battles.models import Battle
from leaderboard.estimates import board_estimates
from leaderboard.ratings.pairing import fewer_votes_pairs, informative_pairs


def battle_pair_pick(
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
    return pair_pick(candidates, rule=RULES[strategy or settings.ARENA_BATTLE_SELECTION],
                     rng=rng)


def _fewer_votes(pool: list[AIModel]) -> np.ndarray:
    votes = _vote_counts([m.slug for m in pool])
    return fewer_votes_pairs(np.array([votes[m.slug] for m in pool]))


def _informative(pool: list[AIModel]) -> np.ndarray:
    estimates = board_estimates(board=TEXT_BOARD.name, subjects=[m.slug for m in pool])
    return informative_pairs(np.array([estimates[m.slug][0] for m in pool]),
                             np.array([estimates[m.slug][1] for m in pool]))


RULES = {"uniform": None, "fewer_votes": _fewer_votes, "informative": _informative}


def _vote_counts(slugs: list[str]) -> dict[str, int]:
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

"""Which two models meet."""

from __future__ import annotations

import random
from collections.abc import Sequence

from django.conf import settings
from django.db.models import Count, Q

from arena.models import AIModel


def select_models_for_battle(
    candidates: Sequence[AIModel],
    *,
    strategy: str | None = None,
    rng: random.Random | None = None,
) -> tuple[AIModel, AIModel]:
    """Two different models from ``candidates``.

    ``uniform`` (seed 000): every pair equally likely. ``fewer_votes``: each model
    is drawn with weight 1/sqrt(1 + its votes), so new models catch up.
    The caller guarantees at least two candidates.
    """
    rng = rng or random.SystemRandom()
    strategy = strategy or settings.ARENA_BATTLE_SELECTION
    pool = list(candidates)
    if len(pool) < 2:
        raise ValueError("at least two models are needed for a battle")
    if strategy == "uniform":
        first, second = rng.sample(pool, 2)
        return first, second
    votes = _vote_counts([m.slug for m in pool])
    weights = [1.0 / (1.0 + votes.get(m.slug, 0)) ** 0.5 for m in pool]
    first = rng.choices(pool, weights=weights, k=1)[0]
    rest = [(m, w) for m, w in zip(pool, weights, strict=True) if m.slug != first.slug]
    second = rng.choices([m for m, _ in rest], weights=[w for _, w in rest], k=1)[0]
    return first, second


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

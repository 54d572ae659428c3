"""A battle's categories: its first prompt classified once (arena.prompt_categories), and
``multi_turn`` once it has a follow-up. They decide which category boards its vote counts on
(the vote keeps a copy: a classification that ends after the vote updates it too).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from arena import aio
from arena.errors import RateLimited
from arena.prompt_categories import CATEGORY_BITS, Classification, category_bits, classify_prompt
from arena.queries import one_or_none
from arena.ratelimit import provider_budget
from arena.steps import enqueue_task, release_database
from battles.models import Battle, Turn, Vote

logger = logging.getLogger(__name__)

CLASSIFY_TASK = "battles.tasks.classify_battle"
MULTI_TURN = "multi_turn"


def classify_later(battle: Battle) -> None:
    """Classify the battle's first prompt in the worker, once this transaction commits.

    The vote sends it: only voted battles count on a board, and by then both answers are
    written, so the classifier (by default a local model, maybe one of the two answering)
    never slows an answer down, nor is asked about a battle nobody votes on."""
    enqueue_task(CLASSIFY_TASK, str(battle.pk))


def tag_multi_turn(battle: Battle) -> None:
    """A follow-up came (before any vote: a voted battle takes none)."""
    Battle.objects.filter(pk=battle.pk).update(
        categories=F("categories").bitor(CATEGORY_BITS[MULTI_TURN]))


def _classifier_endpoint():
    """The configured classifier model's endpoint, or ``(None, why not)``."""
    from arena.availability import model_availability
    from arena.models import AIModel
    from arena.selectors import model_endpoint

    slug = settings.ARENA_CLASSIFIER_MODEL
    if not slug:
        return None, "no classifier model is configured"
    model = one_or_none(AIModel.objects.filter(pk=slug))
    if model is None:
        return None, f"the classifier model {slug} is not in the model registry"
    availability = model_availability(model)
    if not availability.available:
        return None, f"the classifier model is unavailable: {availability.reason}"
    try:
        provider_budget([model.provider])  # the same per-minute budget as every call
    except RateLimited as exc:
        return None, (f"the classifier's provider had no calls left this minute "
                      f"(free again in {exc.retry_after} s)")
    return model_endpoint(model), ""


def battle_classify(*, battle_id: str) -> Classification | None:
    """Classify a battle's first prompt, once (a redelivered task finds it done)."""
    battle = one_or_none(Battle.objects.filter(pk=battle_id, classified_at__isnull=True))
    if battle is None:
        return None
    prompt = Turn.objects.filter(battle=battle, index=1).values_list("prompt", flat=True).first()
    if prompt is None:
        return None
    endpoint, unavailable = _classifier_endpoint()
    release_database()  # the model may take seconds: hold no connection meanwhile
    result = aio.run(classify_prompt(prompt, endpoint, unavailable=unavailable))
    bits = category_bits(result.categories)
    with transaction.atomic():
        updated = Battle.objects.filter(pk=battle.pk, classified_at__isnull=True).update(
            categories=F("categories").bitor(bits), language=result.language,
            classified_at=timezone.now(), classification_note=result.note[:300])
        if updated:  # voted already: the vote's copy follows
            Vote.objects.filter(battle_id=battle.pk).update(
                categories=F("categories").bitor(bits), language=result.language)
    logger.info("battle %s classified by %s: %s", battle.pk, result.method,
                ", ".join(sorted(result.tags)) or "no category")
    return result

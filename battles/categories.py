"""A battle's categories: its first prompt classified once (arena.prompt_categories), and
``multi_turn`` once it has a follow-up. They decide which category boards its vote counts on
(the vote keeps a copy).

Only voted battles count on a board, so a battle is classified after its vote, in the
worker and in batches: votes come many a second, and one run that reads, classifies and
writes a few hundred battles together costs a fraction of a task per vote. A vote cast on a
battle not classified yet is marked ``categories_pending``; the run copies the categories to
it. The classifier (by default a local model, maybe one of the two answering) thus never
slows an answer down, nor is asked about a battle nobody votes on.
"""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

from arena import aio
from arena.availability import model_availability
from arena.errors import RateLimited
from arena.llm.ledger import calls_held, enter_held
from arena.llm.types import ModelEndpoint
from arena.models import AIModel
from arena.prompt_categories import CATEGORY_BITS, Classification, category_bits, classify_prompt
from arena.queries import one_or_none, update_each
from arena.ratelimit import LimitsUnavailable, provider_budget
from arena.selectors import model_endpoint
from arena.steps import batch_soon, batch_started, release_database, send_task
from battles.models import Battle, Turn, Vote

logger = logging.getLogger(__name__)

CLASSIFY_TASK = "battles.tasks.classify_voted"
CLASSIFY_KEY = "battles:classify-voted"
CLASSIFY_DELAY_SECONDS = 0.5  # a vote's categories are written about this long after it
CLASSIFY_BATCH = 500
CLASSIFIER_CALLS_AT_ONCE = 8
MULTI_TURN = "multi_turn"


def classify_after_vote() -> None:
    """Once the vote's transaction commits, have the worker classify the voted battles
    waiting for it soon. A broker that cannot take it now loses nothing: the votes stay
    marked, and the beat's run (every minute) or the next vote's takes them."""
    def schedule() -> None:
        try:
            _classify_soon(CLASSIFY_DELAY_SECONDS)
        except (OperationalError, RedisError, OSError) as exc:
            logger.warning("voted battles could not be sent to be classified now (%s); "
                           "the next run takes them", exc)

    transaction.on_commit(schedule)


def tag_multi_turn(battle: Battle) -> None:
    """A follow-up came (before any vote: a voted battle takes none)."""
    Battle.objects.filter(pk=battle.pk).update(
        categories=F("categories").bitor(CATEGORY_BITS[MULTI_TURN]))


def votes_classify_pending() -> int:
    """Classify the battles of the votes waiting for their categories (oldest first, one
    batch), and copy the categories to the votes. Returns how many battles it classified."""
    batch_started(CLASSIFY_KEY)
    waiting = list(Vote.objects.filter(categories_pending=True).order_by("created_at")
                   .values_list("battle_id", flat=True)[:CLASSIFY_BATCH])
    done = battles_classify(waiting)
    if len(waiting) == CLASSIFY_BATCH:  # more are waiting
        _classify_soon(0)
    return len(done)


def _classify_soon(countdown: float) -> None:
    batch_soon(CLASSIFY_KEY, lambda: send_task(CLASSIFY_TASK, [], countdown=countdown),
               countdown=countdown)


def battles_classify(battle_ids) -> dict:
    """Classify the first prompt of each battle among ``battle_ids`` not classified yet
    (rules, then the classifier model where it is available), once: a battle another run
    classified meanwhile keeps that run's result. Returns ``{battle id: Classification}``."""
    prompts = dict(Turn.objects.filter(battle_id__in=list(battle_ids), index=1,
                                       battle__classified_at__isnull=True)
                   .values_list("battle_id", "prompt"))
    if not prompts:
        return {}
    asks = _classifier_asks(len(prompts))
    release_database()  # the model may take seconds: hold no connection meanwhile
    # The calls are entered after, from this thread, as a step's are: entered from a thread
    # of their own while a caller's transaction held SQLite's write lock, they waited forever.
    with calls_held() as calls:
        results = dict(zip(prompts, aio.run(_classify_all(list(prompts.values()), asks)),
                           strict=True))
    enter_held(calls)
    written = _save(results)
    for battle_id in written:
        logger.info("battle %s classified by %s: %s", battle_id, results[battle_id].method,
                    ", ".join(sorted(results[battle_id].tags)) or "no category")
    return {battle_id: results[battle_id] for battle_id in written}


def _save(results: dict) -> list:
    """Write the classifications of battles still unclassified, and copy each battle's
    categories to its waiting vote; the ids of the battles written."""
    now = timezone.now()
    with transaction.atomic():
        battles = {b.pk: b for b in Battle.objects.select_for_update().filter(
            pk__in=list(results), classified_at__isnull=True).only("pk", "categories")}
        for battle_id, battle in battles.items():
            result = results[battle_id]
            battle.categories |= category_bits(result.categories)
            battle.language, battle.classified_at = result.language, now
            battle.classification_note = result.note[:300]
        update_each(Battle, battles.values(), ["categories", "language", "classified_at",
                                               "classification_note"])
        votes = list(Vote.objects.filter(battle_id__in=list(battles)).only("pk", "battle_id"))
        for vote in votes:
            battle = battles[vote.battle_id]
            vote.categories, vote.language = battle.categories, battle.language
            vote.categories_pending = False
        update_each(Vote, votes, ["categories", "language", "categories_pending"])
    return list(battles)


async def _classify_all(prompts: list[str], asks: list[tuple[ModelEndpoint | None, str]]
                        ) -> list[Classification]:
    """Each prompt classified with its ask (the model's endpoint, or None and why not), at
    most :data:`CLASSIFIER_CALLS_AT_ONCE` model calls at a time."""
    room = asyncio.Semaphore(CLASSIFIER_CALLS_AT_ONCE)

    async def one(prompt: str, endpoint: ModelEndpoint | None, unavailable: str):
        async with room:
            return await classify_prompt(prompt, endpoint, unavailable=unavailable)

    return await asyncio.gather(*(one(p, *ask) for p, ask in zip(prompts, asks, strict=True)))


def _classifier_asks(n: int) -> list[tuple[ModelEndpoint | None, str]]:
    """For ``n`` prompts, the classifier model's endpoint or ``(None, why not)`` each: the
    model must be registered and available, and each call spends one of its provider's
    calls this minute (as every call does)."""
    slug = settings.ARENA_CLASSIFIER_MODEL
    if not slug:
        return [(None, "no classifier model is configured")] * n
    model = one_or_none(AIModel.objects.filter(pk=slug))
    if model is None:
        return [(None, f"the classifier model {slug} is not in the model registry")] * n
    availability = model_availability(model)
    if not availability.available:
        return [(None, f"the classifier model is unavailable: {availability.reason}")] * n
    endpoint, asks = model_endpoint(model), []
    for _ in range(n):
        try:
            provider_budget([model.provider])
        except RateLimited as exc:
            asks.append((None, f"the classifier's provider had no calls left this minute "
                               f"(free again in {exc.retry_after} s)"))
        except LimitsUnavailable:
            asks.append((None, "the classifier's provider calls could not be counted (Redis "
                               "does not answer)"))
        else:
            asks.append((endpoint, ""))
    return asks

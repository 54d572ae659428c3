"""Writes of text battles: create, follow up, retry a side, vote.

Every rule a person can break has a message constant here; views, the API and
the tests use the same constants.
"""

from __future__ import annotations

import logging
import random
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from arena.ratelimit import rate_limit_hit
from battles.models import (
    MAX_MESSAGES,
    Battle,
    Position,
    Response,
    ResponseStatus,
    Slot,
    Turn,
    Vote,
    VoteChoice,
    Winner,
)
from battles.selection import leaked_identity, select_models_for_battle
from battles.signals import vote_recorded

logger = logging.getLogger(__name__)

PROMPT_EMPTY = "Write a prompt first: it cannot be empty."
PROMPT_TOO_LONG = "The prompt is too long: at most {limit:,} characters (it has {length:,})."
NOT_ENOUGH_MODELS = (
    "Fewer than two models are available right now, so no battle can start. "
    "Start the local models or set a provider key, then try again."
)
MESSAGE_LIMIT_REACHED = (
    f"This battle has reached its limit of {MAX_MESSAGES} messages "
    f"(the first prompt and {MAX_MESSAGES - 1} follow-ups). Vote, or start a new battle."
)
BATTLE_ALREADY_VOTED = "This battle has already been voted on."
ANSWERS_NOT_READY = "Both answers must be complete before you can do that."
ANSWER_FAILED = "An answer failed; retry that side before you go on."
NOT_FAILED = "Only a failed answer can be retried."
INVALID_VOTE = "Unknown vote: use left_better, right_better, tie or both_bad."

SCORES = {
    # choice -> (score of the left model, score of the right model), seed 000.
    VoteChoice.LEFT_BETTER: (1.0, 0.0),
    VoteChoice.RIGHT_BETTER: (0.0, 1.0),
    VoteChoice.TIE: (0.5, 0.5),
    VoteChoice.BOTH_BAD: (0.25, 0.25),
}


class BattleError(Exception):
    """A rule was broken; ``status`` is the fitting HTTP status."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _clean_prompt(prompt: str) -> str:
    text = (prompt or "").strip()
    if not text:
        raise BattleError(PROMPT_EMPTY, status=400)
    limit = settings.ARENA_PROMPT_MAX_CHARS
    if len(text) > limit:
        raise BattleError(PROMPT_TOO_LONG.format(limit=limit, length=len(text)), status=422)
    return text


def _enqueue_turn(turn: Turn) -> None:
    from battles.tasks import generate_response

    for response in turn.responses.all():
        generate_response.delay_on_commit(str(response.id), response.generation)


def _add_turn(battle: Battle, prompt: str, index: int) -> Turn:
    turn = Turn.objects.create(battle=battle, index=index, prompt=prompt)
    Response.objects.bulk_create([Response(turn=turn, slot=slot) for slot in (Slot.A, Slot.B)])
    _enqueue_turn(turn)
    return turn


def battle_create(
    *, session_key: str, prompt: str, rng: random.Random | None = None
) -> tuple[Battle, Turn]:
    """Start a battle between two random available models and ask both the first prompt."""
    from arena.selectors import model_list_available

    text = _clean_prompt(prompt)
    rate_limit_hit(key=session_key, action="battle_create",
                   limit=settings.ARENA_BATTLES_PER_MINUTE, window_seconds=60)
    candidates = model_list_available()
    if len(candidates) < 2:
        raise BattleError(NOT_ENOUGH_MODELS, status=503)
    rng = rng or random.SystemRandom()
    model_a, model_b = select_models_for_battle(candidates, rng=rng)
    with transaction.atomic():
        battle = Battle.objects.create(
            session_key=session_key,
            model_a=model_a,
            model_b=model_b,
            model_a_position=rng.choice([Position.LEFT, Position.RIGHT]),
            title=" ".join(text.split())[:120],
        )
        turn = _add_turn(battle, text, 1)
    logger.info("battle %s created", battle.id)
    return battle, turn


def battle_follow_up(*, battle: Battle, prompt: str) -> Turn:
    """Ask both models a follow-up; each sees only its own side of the conversation."""
    text = _clean_prompt(prompt)
    with transaction.atomic():
        battle = Battle.objects.select_for_update().get(pk=battle.pk)
        if Vote.objects.filter(battle=battle).exists():
            raise BattleError(BATTLE_ALREADY_VOTED, status=409)
        turns = list(battle.turns.prefetch_related("responses"))
        if len(turns) >= MAX_MESSAGES:
            raise BattleError(MESSAGE_LIMIT_REACHED, status=409)
        _require_answers_complete(turns)
        turn = _add_turn(battle, text, len(turns) + 1)
        Battle.objects.filter(pk=battle.pk).update(last_active_at=timezone.now())
    return turn


def _require_answers_complete(turns: list[Turn]) -> None:
    statuses = [r.status for t in turns for r in t.responses.all()]
    if ResponseStatus.FAILED in statuses:
        raise BattleError(ANSWER_FAILED, status=409)
    if any(s != ResponseStatus.DONE for s in statuses):
        raise BattleError(ANSWERS_NOT_READY, status=409)


def response_retry(*, battle: Battle, position: str) -> Response:
    """Regenerate the failed answer of the latest turn at one screen position."""
    with transaction.atomic():
        battle = Battle.objects.select_for_update().get(pk=battle.pk)
        if Vote.objects.filter(battle=battle).exists():
            raise BattleError(BATTLE_ALREADY_VOTED, status=409)
        turn = battle.turns.order_by("-index").first()
        response = turn.responses.select_for_update().get(slot=battle.slot_at(position))
        if response.status != ResponseStatus.FAILED:
            raise BattleError(NOT_FAILED, status=409)
        response.status = ResponseStatus.PENDING
        response.error = ""
        response.text = ""
        response.generation += 1
        response.save(update_fields=["status", "error", "text", "generation", "updated_at"])
        from battles.tasks import generate_response

        generate_response.delay_on_commit(str(response.id), response.generation)
    return response


def response_requeue_stale(*, older_than_seconds: int = 300) -> int:
    """Restart answers whose job died with its worker (stuck waiting or writing).

    The generation is bumped first, so a job that was only slow can no longer save.
    """
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    from battles.tasks import generate_response

    requeued = 0
    stale = Response.objects.filter(
        status__in=[ResponseStatus.PENDING, ResponseStatus.STREAMING], updated_at__lt=cutoff
    ).values_list("pk", flat=True)
    for response_id in stale:
        with transaction.atomic():
            response = Response.objects.select_for_update().get(pk=response_id)
            if response.is_finished:
                continue
            response.generation += 1
            response.status = ResponseStatus.PENDING
            response.save(update_fields=["generation", "status", "updated_at"])
            generate_response.delay_on_commit(str(response.id), response.generation)
            requeued += 1
    if requeued:
        logger.warning("requeued %d answers whose job had stopped", requeued)
    return requeued


def battle_vote(*, battle: Battle, choice: str) -> Vote:
    """Record the one vote of this battle, reveal the models, update the online Elo."""
    if choice not in VoteChoice.values:
        raise BattleError(INVALID_VOTE, status=422)
    try:
        with transaction.atomic():
            battle = Battle.objects.select_for_update().get(pk=battle.pk)
            if Vote.objects.filter(battle=battle).exists():
                raise BattleError(BATTLE_ALREADY_VOTED, status=409)
            turns = list(battle.turns.prefetch_related("responses"))
            _require_answers_complete(turns)
            vote = Vote.objects.create(battle=battle, choice=choice,
                                       **_outcome(battle, choice, turns))
            Battle.objects.filter(pk=battle.pk).update(last_active_at=timezone.now())
            transaction.on_commit(lambda: _after_vote(vote))
    except IntegrityError:
        # Two votes raced past the check: the database's one-vote rule decided.
        raise BattleError(BATTLE_ALREADY_VOTED, status=409) from None
    logger.info("battle %s voted %s", battle.id, choice)
    return vote


def _outcome(battle: Battle, choice: str, turns: list[Turn]) -> dict:
    left_score, right_score = SCORES[VoteChoice(choice)]
    if battle.model_a_position == Position.LEFT:
        score_a, score_b = left_score, right_score
    else:
        score_a, score_b = right_score, left_score
    if choice == VoteChoice.TIE:
        winner = Winner.TIE
    elif choice == VoteChoice.BOTH_BAD:
        winner = Winner.BOTH_BAD
    else:
        winner = Winner.MODEL_A if score_a > score_b else Winner.MODEL_B
    texts = [t.prompt for t in turns] + [r.text for t in turns for r in t.responses.all()]
    leaked = leaked_identity(texts, [battle.model_a, battle.model_b])
    return {
        "winner": winner,
        "score_a": score_a,
        "score_b": score_b,
        "counts_for_rating": leaked is None,
        "exclusion_reason": f"the conversation names a model ({leaked!r})" if leaked else "",
    }


def _after_vote(vote: Vote) -> None:
    """Tell listeners (the leaderboard's online Elo and debounced run) about the vote."""
    vote_recorded.send(sender=Vote, vote=vote)

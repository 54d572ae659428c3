"""Blind pairwise votes: the choice → score table, the vote-once rule, reveal after the vote.

A contest shows two anonymous contestants at screen positions; the person votes once;
only then are the contestants revealed. Every blind mode votes through :func:`vote_once`::

    vote = vote_once(
        lock=lambda: Battle.objects.select_for_update().get(pk=battle.pk),
        has_vote=lambda b: Vote.objects.filter(battle=b).exists(),
        record=lambda b: Vote.objects.create(battle=b, ...),
        already_voted=BATTLE_ALREADY_VOTED,
        announce=lambda v: battle_vote_recorded.send(sender=Vote, vote=v),
    )
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from django.db import IntegrityError, models, transaction

from arena import metrics
from arena.errors import RuleError

V = TypeVar("V")
C = TypeVar("C")


class VoteChoice(models.TextChoices):
    LEFT_BETTER = "left_better", "Left is Better"
    RIGHT_BETTER = "right_better", "Right is Better"
    TIE = "tie", "Tie"
    BOTH_BAD = "both_bad", "Both are bad"


class Winner(models.TextChoices):
    """The outcome in contestant terms, as rating engines and exported files use it."""

    MODEL_A = "model_a", "Model A"
    MODEL_B = "model_b", "Model B"
    TIE = "tie", "Tie"
    BOTH_BAD = "both_bad", "Both bad"


LEFT, RIGHT = "left", "right"

SCORES: Mapping[str, tuple[float, float]] = {
    # choice -> (score of the left contestant, score of the right one), seed 000.
    VoteChoice.LEFT_BETTER: (1.0, 0.0),
    VoteChoice.RIGHT_BETTER: (0.0, 1.0),
    VoteChoice.TIE: (0.5, 0.5),
    VoteChoice.BOTH_BAD: (0.25, 0.25),
}

INVALID_VOTE = "Unknown vote: use left_better, right_better, tie or both_bad."


def require_choice(choice: str) -> None:
    """422 for a choice that is not one of :class:`VoteChoice`'s."""
    if choice not in SCORES:
        raise RuleError(INVALID_VOTE, status=422)


def vote_outcome(choice: str, *, a_position: str) -> tuple[str, float, float]:
    """``(winner, score_a, score_b)`` of a vote, given where contestant A was shown."""
    require_choice(choice)
    left, right = SCORES[choice]
    score_a, score_b = (left, right) if a_position == LEFT else (right, left)
    if choice == VoteChoice.TIE:
        return Winner.TIE, score_a, score_b
    if choice == VoteChoice.BOTH_BAD:
        return Winner.BOTH_BAD, score_a, score_b
    return (Winner.MODEL_A if score_a > score_b else Winner.MODEL_B), score_a, score_b


def vote_once(*, lock: Callable[[], C], has_vote: Callable[[C], bool],
              record: Callable[[C], V], already_voted: str,
              announce: Callable[[V], None] | None = None) -> V:
    """Record the one vote of a contest.

    ``lock`` loads the contest under a row lock, so two votes queue; ``has_vote`` refuses a
    second one with 409; the database's unique constraint is the final authority (a race
    that slips past becomes the same 409). ``announce`` runs after commit.
    """
    try:
        with transaction.atomic():
            contest = lock()
            if has_vote(contest):
                raise RuleError(already_voted, status=409)
            vote = record(contest)
            transaction.on_commit(lambda: metrics.vote_cast(vote))
            if announce is not None:
                transaction.on_commit(lambda: announce(vote))
    except IntegrityError:
        raise RuleError(already_voted, status=409) from None
    return vote


"""The text-battle board, declared here and registered with the leaderboard at start-up.

Outcomes are the votes of text battles that count for rating (demo battles included: they
are how a fresh install gets a board). Aggregation happens in SQL: one ``GROUP BY``
over (model a, model b, winner).
"""

from __future__ import annotations

from django.db.models import Count, F
from django.db.models.functions import TruncDay

from battles.models import Battle, Vote
from battles.signals import vote_recorded
from leaderboard.boards import Board, register_board


def _counted():
    return Vote.objects.filter(counts_for_rating=True)


def text_outcomes():
    """``(model_a, model_b, winner, count)`` grouped in SQL."""
    return (
        _counted()
        .values_list("battle__model_a_id", "battle__model_b_id", "winner")
        .annotate(n=Count("pk"))
        .order_by()
    )


def text_ordered_outcomes():
    """``(model_a, model_b, winner, created_at)`` per counted vote, oldest first."""
    return (
        _counted()
        .order_by("created_at", "pk")
        .values_list("battle__model_a_id", "battle__model_b_id", "winner", "created_at")
        .iterator(chunk_size=20_000)
    )


def text_period_outcomes():
    """Counted votes grouped by day (Glicko-2 rating periods of seed 004: 24 hours)."""
    return (
        _counted()
        .annotate(period=TruncDay("created_at"))
        .values_list("period", "battle__model_a_id", "battle__model_b_id", "winner")
        .annotate(n=Count("pk"))
        .order_by("period")
    )


def text_export_rows():
    return (
        _counted()
        .order_by("created_at", "pk")
        .values(
            "winner",
            "battle_id",
            "created_at",
            vote_id=F("pk"),
            model_a=F("battle__model_a_id"),
            model_b=F("battle__model_b_id"),
            is_demo=F("battle__is_demo"),
            battle_created_at=F("battle__created_at"),
        )
        .iterator(chunk_size=20_000)
    )


def text_counts() -> dict[str, int]:
    return {"battles": Battle.objects.count(), "votes": Vote.objects.count()}


def outcome_from_vote(*, vote: Vote, **_kwargs):
    """What the online Elo needs from a freshly committed vote (None if it does not count)."""
    if not vote.counts_for_rating:
        return None
    battle = vote.battle
    return (battle.model_a_id, battle.model_b_id, vote.winner, vote.created_at)


TEXT_BOARD = register_board(
    Board(
        name="text",
        title="Text",
        description=(
            "Blind text battles: two anonymous models answer the same prompt, "
            "a person votes. Bradley–Terry ratings; online Elo shown alongside."
        ),
        primary_method="bt",
        outcomes=text_outcomes,
        ordered_outcomes=text_ordered_outcomes,
        period_outcomes=text_period_outcomes,
        export_rows=text_export_rows,
        counts=text_counts,
        signal=vote_recorded,
        outcome_from_signal=outcome_from_vote,
        order=10,
    )
)

"""The text-battle board, declared here and registered with the leaderboard at start-up.

Outcomes are the votes of text battles that count for rating (demo battles included: they
are how a fresh install gets a board). Aggregation happens in SQL: one ``GROUP BY``
over the pair (model a, model b) with a count per result.
"""

from __future__ import annotations

from django.db.models import Q

from arena.prompt_categories import CATEGORY_TITLES
from battles.models import Battle, BattleCategory, Vote
from battles.signals import vote_recorded
from leaderboard.boards import (
    Board,
    Recent,
    grouped_outcomes,
    ordered_outcomes,
    outcome_for,
    period_outcomes,
    register_board,
    subject_grouped_outcomes,
)
from leaderboard.vote_arrays import VoteArrays, vote_arrays

PAIR = {"model_a": "battle__model_a_id", "model_b": "battle__model_b_id"}


def _counted():
    return Vote.objects.filter(counts_for_rating=True)


def text_outcomes():
    """``(model_a, model_b, winner, count)`` rows of counted votes, aggregated in SQL."""
    return grouped_outcomes(_counted(), **PAIR)


def text_ordered_outcomes(since=None):
    """Counted votes one by one, oldest first (replays the online Elo)."""
    return ordered_outcomes(_counted(), since=since, **PAIR)


def text_period_outcomes():
    """Counted votes grouped by day (Glicko-2 rating periods)."""
    return period_outcomes(_counted(), **PAIR)


# The style columns are what ``rate --style-control`` reads: per side, over every turn of
# the battle, the answer tokens and the Markdown headers, list items and bold spans (summed
# on the vote when it is cast).
STYLE_EXPORT = Vote.STYLE_FIELDS
# One true/false column per category (what ``rate --category NAME`` reads) and the language.
CATEGORY_EXPORT = (*CATEGORY_TITLES, "language")
EXPORT_COLUMNS = ("model_a", "model_b", "winner", "vote_id", "battle_id", "created_at",
                  "battle_created_at", "is_demo", *STYLE_EXPORT, *CATEGORY_EXPORT)


def _battle_categories(battle_ids) -> dict:
    """battle id -> its category tags."""
    tags: dict = {}
    for battle_id, tag in BattleCategory.objects.filter(battle_id__in=battle_ids).values_list(
            "battle_id", "category"):
        tags.setdefault(battle_id, set()).add(tag)
    return tags


def text_export_rows():
    """Counted votes oldest first, as dicts in :data:`EXPORT_COLUMNS` order."""
    rows = (
        _counted()
        .order_by("created_at", "pk")
        .values_list(
            "battle__model_a_id", "battle__model_b_id", "winner", "pk", "battle_id",
            "created_at", "battle__created_at", "battle__is_demo", *STYLE_EXPORT,
            "battle__language",
        )
        .iterator(chunk_size=20_000)
    )
    for chunk in _chunks(rows, 5_000):
        categories = _battle_categories([row[4] for row in chunk])
        for *row, language in chunk:
            tags = categories.get(row[4], set())
            flags = [str(name in tags).lower() for name in CATEGORY_TITLES]
            yield dict(zip(EXPORT_COLUMNS, (*row, *flags, language), strict=True))


# Vote.STYLE_FIELDS as (side a's four, side b's four), in STYLE_ELEMENTS order.
_STYLE_ORDER = [f"{element}_{slot}" for slot in ("a", "b")
                for element in ("tokens", "headers", "lists", "bold")]


def text_styled_votes(subjects: list[str]) -> VoteArrays:
    """Each counted vote with the style of both sides (what style control needs), from the
    vote table alone: columns are side a's (tokens, headers, lists, bold), then side b's."""
    return vote_arrays(_counted(), subjects, columns=_STYLE_ORDER, **PAIR)


def _chunks(rows, size: int):
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def text_category_outcomes():
    """``(category, model_a, model_b, winner, count)`` rows of counted votes, every category
    in one GROUP BY."""
    counted = BattleCategory.objects.filter(battle__vote__counts_for_rating=True)
    return grouped_outcomes(counted, model_a="battle__model_a_id",
                            model_b="battle__model_b_id", winner="battle__vote__winner",
                            by=("category",))


def text_subject_outcomes(subject: str):
    return subject_grouped_outcomes(_counted(), subject, **PAIR)


def text_recent(subject: str, limit: int):
    """The model's latest voted battles (a battle is public once voted; demos left out)."""
    votes = (Vote.objects.filter(battle__is_demo=False)
             .filter(Q(battle__model_a_id=subject) | Q(battle__model_b_id=subject))
             .order_by("-created_at")
             .values_list("battle_id", "battle__title", "created_at", "battle__model_a_id",
                          "winner")[:limit])
    for battle_id, title, when, model_a, winner in votes:
        yield Recent(title, f"/battle/{battle_id}/", when, outcome_for(subject, model_a, winner))


def text_counts() -> dict[str, int]:
    """All battles and votes, counted or not (uncounted votes are few: indexed)."""
    return {"battles": Battle.objects.count(),
            "votes_excluded": Vote.objects.filter(counts_for_rating=False).count()}


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
        subject_outcomes=text_subject_outcomes,
        recent=text_recent,
        styled_votes=text_styled_votes,
        category_outcomes=text_category_outcomes,
        signal=vote_recorded,
        outcome_from_signal=outcome_from_vote,
        order=10,
    )
)


"""The text-battle board, declared here and registered with the leaderboard at start-up.

Outcomes are the votes of text battles that count for rating (demo battles included: they
are how a fresh install gets a board). A vote carries its pair, style, categories and
language, so a rating run reads the vote table alone, once (``vote_scan``); other reads
aggregate in SQL: one ``GROUP BY`` over the pair with a count per result.
"""

from __future__ import annotations

from django.db.models import Q

from arena.models import AIModel
from arena.prompt_categories import CATEGORY_TITLES, category_tags
from battles.models import Battle, Vote
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
from leaderboard.runs.scans import VoteScan, vote_scan

PAIR = {"model_a": "model_a_id", "model_b": "model_b_id"}


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


def text_export_rows():
    """Counted votes oldest first, as dicts in :data:`EXPORT_COLUMNS` order."""
    rows = (
        _counted()
        .order_by("created_at", "pk")
        .values_list(
            "model_a_id", "model_b_id", "winner", "pk", "battle_id", "created_at",
            "battle__created_at", "battle__is_demo", *STYLE_EXPORT, "categories", "language",
        )
        .iterator(chunk_size=20_000)
    )
    for *row, bits, language in rows:
        tags = category_tags(bits)
        flags = [str(name in tags).lower() for name in CATEGORY_TITLES]
        yield dict(zip(EXPORT_COLUMNS, (*row, *flags, language), strict=True))


# Vote.STYLE_FIELDS as side a's four, then side b's, in STYLE_ELEMENTS order.
_STYLE_ORDER = [f"{element}_{slot}" for slot in ("a", "b")
                for element in ("tokens", "headers", "lists", "bold")]


def text_vote_scan() -> VoteScan:
    """Every counted vote with its style, categories and language, from the vote table."""
    subjects = list(AIModel.objects.values_list("slug", flat=True))
    return vote_scan(_counted(), subjects, style=_STYLE_ORDER, categories="categories",
                     language="language", **PAIR)


def text_subject_outcomes(subject: str):
    return subject_grouped_outcomes(_counted(), subject, **PAIR)


def text_recent(subject: str, limit: int):
    """The model's latest voted battles (a battle is public once voted; demos left out)."""
    votes = (Vote.objects.filter(battle__is_demo=False)
             .filter(Q(model_a_id=subject) | Q(model_b_id=subject))
             .order_by("-created_at")
             .values_list("battle_id", "battle__title", "created_at", "model_a_id",
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
    return (vote.model_a_id, vote.model_b_id, vote.winner, vote.created_at)


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
        vote_scan=text_vote_scan,
        signal=vote_recorded,
        outcome_from_signal=outcome_from_vote,
        order=10,
    )
)


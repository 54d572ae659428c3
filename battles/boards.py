"""The text-battle board, declared here and registered with the leaderboard at start-up.

Outcomes are the votes of text battles that count for rating (demo battles included: they
are how a fresh install gets a board). A vote carries its pair, style, categories and
language, so a rating run reads the vote table alone, once (``vote_scan``); other reads
aggregate in SQL: one ``GROUP BY`` over the pair with a count per result.
"""

from __future__ import annotations

from django.db.models import Q

from arena.prompt_categories import CATEGORY_TITLES, category_tags
from battles.models import Battle, Vote
from battles.signals import battle_vote_recorded
from leaderboard.boards import Board, Recent, ScanColumns, outcome_for, register_board

COUNTED = Vote.objects.filter(counts_for_rating=True)

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
        COUNTED
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


# What a vote scan reads besides the pair and the result: Vote.STYLE_FIELDS as side a's
# four, then side b's, in STYLE_ELEMENTS order; the category bits and the language.
SCAN = ScanColumns(style=tuple(f"{element}_{slot}" for slot in ("a", "b")
                               for element in ("tokens", "headers", "lists", "bold")),
                   categories="categories", language="language")


def text_recent(subject: str, limit: int):
    """The model's latest voted battles (a battle is public once voted; demos left out)."""
    votes = (Vote.objects.filter(battle__is_demo=False)
             .filter(Q(model_a_id=subject) | Q(model_b_id=subject))
             .order_by("-created_at")
             .values_list("battle_id", "battle__title", "created_at", "model_a_id",
                          "winner")[:limit])
    for battle_id, title, when, model_a, winner in votes:
        yield Recent(title, f"/battle/{battle_id}/", when, outcome_for(subject, model_a, winner))


def outcome_from_signal(*, vote: Vote, **_kwargs):
    """What the online Elo needs from a freshly committed vote (None if it does not count)."""
    if not vote.counts_for_rating:
        return None
    return (vote.model_a_id, vote.model_b_id, vote.winner, vote.created_at)


# Counts: every battle, and the votes that do not count (few: indexed).
TEXT_BOARD = register_board(
    Board.from_queryset(
        COUNTED,
        name="text",
        title="Text",
        description=(
            "Blind text battles: two anonymous models answer the same prompt, "
            "a person votes. Bradley–Terry ratings; online Elo shown alongside."
        ),
        primary_method="bt",
        contests=Battle.objects.all(),
        uncounted=Vote.objects.filter(counts_for_rating=False),
        scan=SCAN,
        export_rows=text_export_rows,
        recent=text_recent,
        signal=battle_vote_recorded,
        outcome_from_signal=outcome_from_signal,
        order=10,
    )
)

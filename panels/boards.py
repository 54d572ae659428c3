"""The ``panel`` board: models rated by their peers over many panels (AI-judged).

Each valid ranking of n answers becomes n (n − 1) / 2 pairwise outcomes (the higher-ranked
answer wins), stored as :class:`~panels.models.PanelOutcome` rows and aggregated here
in SQL. Pairs that contain the judge itself count unless ``ARENA_PANEL_BOARD_SELF_VOTES`` is
off (the setting is read at every run, so turning it off re-rates from all stored panels).
"""

from __future__ import annotations

from django.conf import settings

from leaderboard.boards import (
    Board,
    grouped_outcomes,
    ordered_outcomes,
    period_outcomes,
    register_board,
    subject_grouped_outcomes,
)
from panels.models import Panel, PanelOutcome, PanelStatus
from panels.signals import panel_outcome_recorded

PAIR = {"model_a": "model_a_id", "model_b": "model_b_id"}


def _counted():
    outcomes = PanelOutcome.objects.all()
    if not settings.ARENA_PANEL_BOARD_SELF_VOTES:
        outcomes = outcomes.filter(is_self_vote=False)
    return outcomes


def panel_outcomes():
    """``(model_a, model_b, winner, count)`` rows from one ``GROUP BY`` over the pair."""
    return grouped_outcomes(_counted(), **PAIR)


def panel_subject_outcomes(subject: str):
    return subject_grouped_outcomes(_counted(), subject, **PAIR)


def panel_ordered_outcomes(since=None):
    """Outcomes one by one, oldest first (replays the online Elo)."""
    return ordered_outcomes(_counted(), since=since, **PAIR)


def panel_period_outcomes():
    return period_outcomes(_counted(), **PAIR)


EXPORT_COLUMNS = ("model_a", "model_b", "winner", "judge", "is_self_vote", "panel_id",
                  "created_at")


def panel_export_rows():
    rows = _counted().values_list(
        "model_a_id", "model_b_id", "winner", "judge_id", "is_self_vote", "panel_id",
        "created_at",
    ).iterator(chunk_size=20_000)
    for row in rows:
        yield dict(zip(EXPORT_COLUMNS, row, strict=True))


def panel_counts() -> dict[str, int]:
    """Finished panels, and the outcomes the self-vote setting leaves out."""
    excluded = 0
    if not settings.ARENA_PANEL_BOARD_SELF_VOTES:
        excluded = PanelOutcome.objects.filter(is_self_vote=True).count()
    return {"battles": Panel.objects.filter(status=PanelStatus.DONE).count(),
            "votes_excluded": excluded}


def outcome_from_signal(*, outcome: PanelOutcome, **_kwargs):
    if outcome.is_self_vote and not settings.ARENA_PANEL_BOARD_SELF_VOTES:
        return None
    return (outcome.model_a_id, outcome.model_b_id, outcome.winner, outcome.created_at)


PANEL_BOARD = register_board(
    Board(
        name="panel",
        title="Panel (AI-judged)",
        description=(
            "Every model answers the same question and every answering model ranks all "
            "answers, blind and in its own order; each ranking counts as pairwise wins. "
            "Bradley–Terry ratings from the models' judgements of each other."
        ),
        primary_method="bt",
        outcomes=panel_outcomes,
        ordered_outcomes=panel_ordered_outcomes,
        period_outcomes=panel_period_outcomes,
        export_rows=panel_export_rows,
        counts=panel_counts,
        subject_outcomes=panel_subject_outcomes,
        signal=panel_outcome_recorded,
        outcome_from_signal=outcome_from_signal,
        order=20,
    )
)

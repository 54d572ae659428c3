"""The ``panel`` board: models rated by their peers over many panels (AI-judged).

Each valid ranking of n answers becomes n (n − 1) / 2 pairwise outcomes (the higher-ranked
answer wins), stored as :class:`~panels.models.PanelOutcome` rows and aggregated here
in SQL. Pairs that contain the judge itself count unless ``ARENA_PANEL_BOARD_SELF_VOTES`` is
off (the setting is read at every run, so turning it off re-rates from all stored panels).
"""

from __future__ import annotations

from django.conf import settings

from leaderboard.boards import Board, register_board
from panels.models import Panel, PanelOutcome, PanelStatus
from panels.signals import panel_outcome_recorded


def counted_outcomes():
    outcomes = PanelOutcome.objects.all()
    if not settings.ARENA_PANEL_BOARD_SELF_VOTES:
        outcomes = outcomes.filter(is_self_vote=False)
    return outcomes


def left_out_outcomes():
    """The outcomes the self-vote setting leaves out."""
    if settings.ARENA_PANEL_BOARD_SELF_VOTES:
        return PanelOutcome.objects.none()
    return PanelOutcome.objects.filter(is_self_vote=True)


def outcome_from_signal(*, outcome: PanelOutcome, **_kwargs):
    if outcome.is_self_vote and not settings.ARENA_PANEL_BOARD_SELF_VOTES:
        return None
    return (outcome.model_a_id, outcome.model_b_id, outcome.winner, outcome.created_at)


PANEL_BOARD = register_board(
    Board.from_queryset(
        counted_outcomes,
        name="panel",
        title="Panel (AI-judged)",
        description=(
            "Every model answers the same question and every answering model ranks all "
            "answers, blind and in its own order; each ranking counts as pairwise wins. "
            "Bradley–Terry ratings from the models' judgements of each other."
        ),
        primary_method="bt",
        contests=Panel.objects.filter(status=PanelStatus.DONE),
        uncounted=left_out_outcomes,
        export={"judge": "judge_id", "is_self_vote": "is_self_vote", "panel_id": "panel_id"},
        signal=panel_outcome_recorded,
        outcome_from_signal=outcome_from_signal,
        order=20,
        play=("Ask the panel", "/panel/"),
    )
)

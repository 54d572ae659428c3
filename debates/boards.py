"""The two debate boards (seed 004): ``debate-crowd`` (the crowd's majority per debate) and
``debate-ai`` (the judge's verdict per debate), both Glicko-2 with 24-hour rating periods
(τ 0.5, start 1500 / 350 / 0.06: :mod:`leaderboard.ratings.glicko2`'s defaults).

Each debate counts once per board, as a win, loss or tie between its two models; a debate
enters the crowd board with its first vote and moves if the majority changes.
"""

from __future__ import annotations

from django.db.models import F

from debates.models import Debate, DebateStatus, DebateTurn
from debates.signals import debate_verdict_recorded
from leaderboard.boards import (
    Board,
    exported_rows,
    grouped_outcomes,
    ordered_outcomes,
    period_outcomes,
    register_board,
    subject_grouped_outcomes,
)

PAIR = {"model_a": "model_a_id", "model_b": "model_b_id"}


def _counted(field: str):
    """Debates with a result on this board (calibration debates never count). A crowd
    result does not count when a debater named a model (as a battle vote does not): its
    voters may have known who was who."""
    debates = Debate.objects.exclude(**{field: ""}).filter(handicapped="")
    if field == "crowd_outcome":
        debates = debates.exclude(pk__in=DebateTurn.objects.exclude(names_model="")
                                  .values("debate_id"))
    return debates.annotate(winner=F(field))


def _board(name: str, field: str, kind: str, title: str, description: str, order: int):
    signal_kind = kind  # which debate_verdict_recorded sends concern this board
    def outcomes():
        return grouped_outcomes(_counted(field), **PAIR)

    def subject_outcomes(subject: str):
        return subject_grouped_outcomes(_counted(field), subject, **PAIR)

    def ordered(since=None):
        return ordered_outcomes(_counted(field), since=since, **PAIR)

    def periods():
        return period_outcomes(_counted(field), **PAIR)

    def export_rows():
        return exported_rows(_counted(field), id_field="pk", id_column="debate_id", **PAIR)

    def counts():
        return {"battles": Debate.objects.filter(status=DebateStatus.COMPLETED).count(),
                "votes": _counted(field).count()}

    def from_signal(*, debate: Debate, kind: str = "", **_kwargs):
        value = getattr(debate, field)
        if kind != signal_kind or not value or not _counted(field).filter(pk=debate.pk).exists():
            return None
        return debate.model_a_id, debate.model_b_id, value, debate.created_at

    return register_board(Board(
        name=name, title=title, description=description, primary_method="glicko2",
        outcomes=outcomes, subject_outcomes=subject_outcomes, ordered_outcomes=ordered,
        period_outcomes=periods, export_rows=export_rows, counts=counts,
        signal=debate_verdict_recorded, outcome_from_signal=from_signal,
        section="debates.standings.debate_section", order=order))


DEBATE_CROWD_BOARD = _board(
    "debate-crowd", "crowd_outcome", "crowd", "Debates (crowd)",
    "Each debate's crowd majority (pro, con or tie) as a result between its two models, "
    "rated with Glicko-2 over 24-hour periods: how persuasive people found each model.", 30)
DEBATE_AI_BOARD = _board(
    "debate-ai", "ai_outcome", "ai", "Debates (AI judge)",
    "Each debate's verdict by the AI judge (read twice with the order swapped) as a result "
    "between its two models, rated with Glicko-2 over 24-hour periods: logical rigour.", 31)

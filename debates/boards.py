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
from leaderboard.boards import Board, register_board


def counted_debates(field: str):
    """Debates with a result on this board (calibration debates never count). A crowd
    result does not count when the debate named a model (as a battle vote does not): its
    voters may have known who was who."""
    debates = Debate.objects.exclude(**{field: ""}).filter(handicapped="")
    if field == "crowd_outcome":
        debates = debates.exclude(pk__in=DebateTurn.objects.exclude(names_model="")
                                  .values("debate_id"))
    return debates.annotate(winner=F(field))





def _board(name: str, field: str, verdict: str, title: str, description: str, order: int):
    """A board of one ``verdict`` (the ``kind`` of debate_verdict_recorded's sends that
    concern it), read from the debates' ``field``."""
    counted = counted_debates(field)

    def outcome_from_signal(*, debate: Debate, kind: str = "", **_kwargs):
        value = getattr(debate, field)
        if kind != verdict or not value or not counted.filter(pk=debate.pk).exists():
            return None
        return debate.model_a_id, debate.model_b_id, value, debate.created_at

    return register_board(Board.from_queryset(
        counted, name=name, title=title, description=description, primary_method="glicko2",
        contests=Debate.objects.filter(status=DebateStatus.COMPLETED),
        export={"debate_id": "pk"}, signal=debate_verdict_recorded,
        outcome_from_signal=outcome_from_signal, section="debates.standings.debate_section",
        metrics="debates.standings.board_metrics",
        order=order, play=("Start a debate", "/debates/new/")))


DEBATE_CROWD_BOARD = _board(
    "debate-crowd", "crowd_outcome", "crowd", "Debates (crowd)",
    "Each debate's crowd majority (pro, con or tie) as a result between its two models, "
    "rated with Glicko-2 over 24-hour periods: how persuasive people found each model.", 30)
DEBATE_AI_BOARD = _board(
    "debate-ai", "ai_outcome", "ai", "Debates (AI judge)",
    "Each debate's verdict by the AI judge (read twice with the order swapped) as a result "
    "between its two models, rated with Glicko-2 over 24-hour periods: logical rigour.", 31)

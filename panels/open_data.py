"""What a data release publishes of panels: every counted pairwise outcome of the ``panel``
board (one judge model's ranking of two answers) of a finished panel, as a separate, AI-judged
board. No text: nobody voted, so nobody could let a question be published. The language and
categories are the question's, by the text battles' rules."""

from __future__ import annotations

from panels.boards import counted_outcomes, left_out_outcomes
from panels.models import PanelStatus
from releases.sources import Source, prompt_columns, register_source

STILL_RUNNING = "the panel was still running"
SELF_VOTES_OFF = "a judge ranking its own answer (self-votes are switched off)"


def panel_release_rows(until):
    outcomes = (counted_outcomes()
                .filter(created_at__lt=until, panel__status=PanelStatus.DONE)
                .order_by("created_at", "pk")
                .values_list("pk", "panel_id", "judge_id", "model_a_id", "model_b_id", "winner",
                             "created_at", "panel__question"))
    for pk, panel, judge, model_a, model_b, winner, created_at, question in outcomes.iterator(
            chunk_size=5_000):
        yield {"id": pk, "contest_id": panel, "judge": judge, "model_a": model_a,
               "model_b": model_b, "winner": winner, "created_at": created_at, "turns": 1,
               **prompt_columns(question)}


def panel_release_removed(until) -> dict[str, int]:
    return {STILL_RUNNING: counted_outcomes().filter(created_at__lt=until)
            .exclude(panel__status=PanelStatus.DONE).count(),
            SELF_VOTES_OFF: left_out_outcomes().filter(created_at__lt=until).count()}


PANEL_SOURCE = register_source(Source(
    board="panel", mode="panel", rows=panel_release_rows, removed=panel_release_removed,
    voter="ai", note="Bradley–Terry over every judge's pairwise rankings"))

"""What a data release publishes of debates: each counted crowd vote (pro, con or tie) of a
debate finished by the release's cut on the ``debate-crowd`` board, as a result between the
debate's two models, with the motion and each side's speeches when the voter let them be
published and the debate is listed. The language and categories are the motion's, by the text
battles' rules. A debate still running at the cut is left out: its other
viewers were still blind. Debates are picked by when they ended, not by their status now, so
a past date built again holds the same debates."""

from __future__ import annotations

from debates.boards import counted_debates
from debates.models import CrowdChoice, CrowdVote, DebateTurn, Position
from releases.sources import (
    Source,
    prompt_columns,
    register_source,
    removed_by_reason,
    rows_in_batches,
)

STILL_RUNNING = "the debate was still running (its viewers are blind)"
NOT_ON_BOARD = "the debate does not count on the board"


def _votes(until):
    return CrowdVote.objects.filter(created_at__lt=until).exclude(choice=CrowdChoice.REVEALED)


def crowd_release_rows(until):
    votes = (_votes(until).filter(counts_for_rating=True, debate__completed_at__lte=until,
                                  debate__in=counted_debates("crowd_outcome"))
             .select_related("debate__topic").order_by("created_at", "pk"))
    yield from rows_in_batches(votes, _rows)


def _rows(votes: list[CrowdVote]):
    published = {v.debate_id for v in votes if v.publish_text and v.debate.is_listed}
    speeches: dict = {}
    for debate_id, position, speech in (
            DebateTurn.objects.filter(debate_id__in=published)
            .order_by("round", "created_at").values_list("debate_id", "position", "speech")):
        speeches.setdefault(debate_id, []).append((position, speech))
    for vote in votes:
        debate = vote.debate
        pro_is_a = debate.model_a_position == Position.PRO
        winner = {CrowdChoice.PRO: "model_a" if pro_is_a else "model_b",
                  CrowdChoice.CON: "model_b" if pro_is_a else "model_a"}.get(vote.choice, "tie")
        row = {"id": vote.pk, "contest_id": debate.pk, "model_a": debate.model_a_id,
               "model_b": debate.model_b_id, "winner": winner, "created_at": vote.created_at,
               "turns": debate.rounds, "publish_text": vote.publish_text and debate.is_listed,
               **prompt_columns(debate.topic.motion)}
        if row["publish_text"]:
            for side, position in (("a", debate.model_a_position),
                                   ("b", Position.CON if pro_is_a else Position.PRO)):
                row[f"conversation_{side}"] = [
                    {"role": "user", "content": f"Motion ({position}): {debate.topic.motion}"},
                    *({"role": "assistant", "content": speech}
                      for turn_position, speech in speeches.get(debate.pk, [])
                      if turn_position == position)]
        yield row


def crowd_release_removed(until) -> dict[str, int]:
    votes = _votes(until)
    removed = removed_by_reason(votes.filter(counts_for_rating=False)
                                .values_list("exclusion_reason", flat=True))
    counted = votes.filter(counts_for_rating=True)
    ended = counted.filter(debate__completed_at__lte=until)
    running = counted.count() - ended.count()
    off_board = ended.exclude(debate__in=counted_debates("crowd_outcome")).count()
    return removed | {STILL_RUNNING: running, NOT_ON_BOARD: off_board}


CROWD_SOURCE = register_source(Source(
    board="debate-crowd", mode="debate", rows=crowd_release_rows, removed=crowd_release_removed,
    note="each debate's crowd majority (group the rows by contest_id) is one result; "
         "Glicko-2 over 24-hour periods"))

"""The crowd's result on a debate: the majority of the votes that count (the integrity rules
decide which do: :mod:`debates.integrity`), kept on the debate for its board."""

from __future__ import annotations

from collections import Counter

from django.db import transaction

from debates.models import CrowdChoice, Debate
from debates.signals import debate_verdict_recorded


def crowd_tally(debate: Debate) -> dict[str, int]:
    """The votes that count, by choice (a reveal never counts)."""
    counts = Counter(debate.votes.filter(counts_for_rating=True)
                     .exclude(choice=CrowdChoice.REVEALED).values_list("choice", flat=True))
    return {c: counts.get(c, 0) for c in ("pro", "con", "tie")}


def majority(tally: dict[str, int]) -> str:
    """The crowd's result: the side with most votes; a draw between the two sides, or tie
    votes outnumbering both, is a tie. ``""`` without votes."""
    if not any(tally.values()):
        return ""
    if tally["pro"] == tally["con"] or tally["tie"] > max(tally["pro"], tally["con"]):
        return "tie"
    return "pro" if tally["pro"] > tally["con"] else "con"


def majority_refresh(debate: Debate) -> None:
    winner = majority(crowd_tally(debate))
    if winner == debate.human_winner:
        return
    debate.human_winner = winner
    debate.crowd_outcome = debate.outcome_of(winner) if winner else ""
    debate.save(update_fields=["human_winner", "crowd_outcome", "updated_at"])
    transaction.on_commit(lambda: debate_verdict_recorded.send(
        sender=Debate, debate=debate, kind="crowd"))

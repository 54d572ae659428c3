"""A person's own leaderboard: Bradley–Terry on their own counted text-battle votes, beside
the global text board's ranks (/me/, ``GET /api/me/leaderboard``).

The fit is the text board's (:mod:`leaderboard.runs.compute`: sandwich intervals, a model
with fewer votes than ``ARENA_LEADERBOARD_MIN_VOTES`` shown as provisional, its rating held
by the weak prior the global board uses). Only the text board: it is the board of votes a
person casts between two models; a debate's crowd vote rates the debaters of a debate the
person did not choose, and a voice battle's vote is on agents, few per person.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db.models import Count

from arena.models import AIModel
from battles.models import Vote
from leaderboard.pages.selectors import snapshot_latest
from leaderboard.runs import compute

BOARD = "text"
BOARDS_NOTE = ("Text battles only: your counted votes (a vote that does not count for the "
               "public board, e.g. one cast twice, does not count here either).")
NEEDS_VOTES = ("Vote on at least one text battle to see your own leaderboard. A model is "
               "provisional until it has {min_votes} of your votes.")


@dataclass(frozen=True)
class PersonalBoard:
    votes: int
    rows: list[dict]
    min_votes: int

    @property
    def empty(self) -> bool:
        return not self.rows

    def as_json(self) -> dict:
        return {"board": BOARD, "boards_note": BOARDS_NOTE, "votes": self.votes,
                "min_votes": self.min_votes,
                "empty_note": NEEDS_VOTES.format(min_votes=self.min_votes) if self.empty
                else "",
                "ci_method": "sandwich", "rows": self.rows}


def _outcome_rows(key: str) -> list[tuple[str, str, str, int]]:
    rows = (Vote.objects.filter(session_key=key, counts_for_rating=True)
            .values_list("model_a_id", "model_b_id", "winner")
            .annotate(n=Count("pk")).order_by())
    return [(a, b, winner, n) for a, b, winner, n in rows]


def _global_ranks() -> dict[str, dict]:
    snapshot = snapshot_latest(board=BOARD)
    if snapshot is None:
        return {}
    return {e["subject"]: e for e in snapshot.entries.values(
        "subject", "rating", "ci_lower", "ci_upper", "rank_ub", "provisional")}


def personal_board(*, visitor_key: str) -> PersonalBoard:
    """The person's board, ranked models first; empty (saying what is needed) before any
    counted vote."""
    min_votes = settings.ARENA_LEADERBOARD_MIN_VOTES
    grouped = compute.group_rows(_outcome_rows(visitor_key))
    if grouped.n == 0:
        return PersonalBoard(0, [], min_votes)
    fit = compute.fit_bt(grouped, ci_method="sandwich")
    tally = compute.tally(grouped)
    provisional = tally.votes < min_votes
    fit = compute.shrink_provisional(fit, grouped, provisional)
    rank = compute.ranks(fit.ci_lower, fit.ci_upper, ~provisional)
    names = dict(AIModel.objects.filter(pk__in=grouped.subjects).values_list("slug", "name"))
    world = _global_ranks()
    rows = []
    # Ranked models first, then the provisional ones, each best first (as the board lists).
    for i in np.lexsort((-fit.rating, provisional)):
        subject = grouped.subjects[i]
        public = world.get(subject)
        rows.append({
            "model": subject, "name": names.get(subject, subject),
            "rating": round(float(fit.rating[i]), 1),
            "ci_lower": round(float(fit.ci_lower[i]), 1),
            "ci_upper": round(float(fit.ci_upper[i]), 1),
            "rank": int(rank[i]) or None, "provisional": bool(provisional[i]),
            "votes": int(tally.votes[i]), "wins": int(tally.wins[i]),
            "losses": int(tally.losses[i]), "ties": int(tally.ties[i]),
            "global": None if public is None else {
                "rating": round(public["rating"], 1), "rank": public["rank_ub"] or None,
                "ci_lower": round(public["ci_lower"], 1),
                "ci_upper": round(public["ci_upper"], 1),
                "provisional": public["provisional"]},
        })
    return PersonalBoard(grouped.total, rows, min_votes)

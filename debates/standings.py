"""The debates section of the leaderboard: crowd and AI ratings side by side.

For each model: its Glicko-2 rating and RD on both debate boards (their latest snapshots),
the controversy index (r_crowd − r_ai) / √(RD_crowd² + RD_ai²) (flagged beyond ±2: the crowd
and the judge disagree about it more than the uncertainty explains), its debates, win rate
by the judge's verdicts and the average factuality of its speeches. Per debate, the
controversial ones are those whose crowd majority went against the judge. Under them, the
token usage per kind of debate (:mod:`debates.usage`).

Every figure here counts completed debates only, and no calibration debate (``handicapped``
set: one side told to argue badly or to state a planted false claim, which would drag its
model's figures). A running debate's speeches are left out because the figures are public
while it is blind: a viewer polling ``GET /api/leaderboard`` during a live debate would see
which model's average moved with the speech just fact-checked. The average factuality is
shown to ``FACTUALITY_DIGITS`` decimals, which is all a reader needs of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.db.models import Avg, Count, F, Q

from arena.contests.proportions import Z95
from debates.models import Debate, DebateStatus, DebateTurn
from debates.usage import USAGE_BY, USAGE_MIN_DEBATES, debate_usage
from leaderboard.pages.selectors import snapshot_latest
from leaderboard.ratings.glicko2 import DEFAULT_RATING, DEFAULT_RD

CONTROVERSY_FLAG = 2.0
TEMPLATE = "debates/standings.html"
FACTUALITY_DIGITS = 3


@dataclass(frozen=True)
class Standing:
    subject: str
    name: str
    crowd_rating: float | None
    crowd_rd: float | None
    crowd_volatility: float | None
    ai_rating: float | None
    ai_rd: float | None
    ai_volatility: float | None
    controversy: float | None
    debates: int
    win_rate: float | None
    factuality: float | None

    @property
    def flagged(self) -> bool:
        return self.controversy is not None and abs(self.controversy) > CONTROVERSY_FLAG


def controversy_index(r_crowd: float, rd_crowd: float, r_ai: float, rd_ai: float) -> float:
    return (r_crowd - r_ai) / math.sqrt(rd_crowd ** 2 + rd_ai ** 2)


def _board_ratings(board: str) -> dict[str, tuple[str, float, float, float | None]]:
    """Per subject: name, Glicko-2 rating, RD and volatility σ of the board's snapshot."""
    snapshot = snapshot_latest(board=board)
    if snapshot is None:
        return {}
    return {subject: (name, rating, (upper - rating) / Z95, volatility)
            for subject, name, rating, upper, volatility in snapshot.entries.values_list(
                "subject", "name", "rating", "ci_upper", "volatility")}


def _counted_debates():
    """The debates the public figures count: completed, and not calibration runs."""
    return Debate.objects.filter(status=DebateStatus.COMPLETED, handicapped="")


def _model_counts() -> dict[str, dict]:
    """Completed debates, judged wins and judged debates per model."""
    counts: dict[str, dict] = {}
    done = _counted_debates()
    for side in ("a", "b"):
        rows = done.values(f"model_{side}_id").annotate(
            n=Count("pk"), judged=Count("pk", filter=~Q(ai_outcome="")),
            won=Count("pk", filter=Q(ai_outcome=f"model_{side}")))
        for row in rows:
            entry = counts.setdefault(row[f"model_{side}_id"],
                                      {"debates": 0, "judged": 0, "won": 0})
            entry["debates"] += row["n"]
            entry["judged"] += row["judged"]
            entry["won"] += row["won"]
    return counts


def debate_standings() -> list[Standing]:
    crowd, ai = _board_ratings("debate-crowd"), _board_ratings("debate-ai")
    counts = _model_counts()
    factuality = {speaker: round(f, FACTUALITY_DIGITS) for speaker, f in DebateTurn.objects
                  .filter(factuality__isnull=False, debate__in=_counted_debates())
                  .values("speaker_id").annotate(f=Avg("factuality"))
                  .values_list("speaker_id", "f")}
    subjects = set(crowd) | set(ai) | set(counts)
    rows = []
    for subject in subjects:
        name = (crowd.get(subject) or ai.get(subject) or (subject,))[0]
        c, a = crowd.get(subject), ai.get(subject)
        index = (controversy_index(c[1], c[2], a[1], a[2]) if c and a else None)
        count = counts.get(subject, {"debates": 0, "judged": 0, "won": 0})
        rows.append(Standing(
            subject=subject, name=name, crowd_rating=c[1] if c else None,
            crowd_rd=c[2] if c else None, crowd_volatility=c[3] if c else None,
            ai_rating=a[1] if a else None, ai_rd=a[2] if a else None,
            ai_volatility=a[3] if a else None, controversy=index, debates=count["debates"],
            win_rate=count["won"] / count["judged"] if count["judged"] else None,
            factuality=factuality.get(subject)))
    rows.sort(key=lambda s: (-(s.ai_rating if s.ai_rating is not None else DEFAULT_RATING),
                             s.ai_rd if s.ai_rd is not None else DEFAULT_RD, s.name))
    return rows


def board_metrics() -> dict[str, dict[str, float | None]]:
    """The debate boards' own figures per model (``Board.metrics``): the controversy index
    and the average factuality, as seed 004's leaderboard entry names them."""
    return {s.subject: {"controversy_index": s.controversy, "avg_factuality": s.factuality}
            for s in debate_standings()}


def controversial_debates(limit: int = 10) -> list[Debate]:
    """Listed debates whose crowd majority went against the judge, newest first."""
    return list(Debate.objects.filter(is_listed=True).exclude(human_winner="").exclude(
        ai_winner="").exclude(human_winner=F("ai_winner")).select_related("topic")
        .order_by("-created_at")[:limit])


def debate_section() -> tuple[str, dict]:
    """The leaderboard's debates section: its template and context."""
    return TEMPLATE, {"standings": debate_standings(),
                      "controversial": controversial_debates(),
                      "flag": CONTROVERSY_FLAG,
                      "usage": {by: debate_usage(by=by) for by in USAGE_BY},
                      "usage_min": USAGE_MIN_DEBATES}

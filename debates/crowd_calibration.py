"""Crowd calibration (seed 004): "Run 50 debates with known quality differences, collect
votes from diverse user pool, validate that crowd votes align with expected outcomes >70%".

:func:`crowd_calibration_start` starts debates with a known quality gap, as the judge's
calibration does (:mod:`debates.calibration`: one side argues its best, the other is
handicapped), but listed, so the crowd finds them and votes; like every calibration debate
they count on no board. :func:`crowd_calibration_report` then reads the crowd's votes on
them over a window: each vote that counts (the integrity rules decide, as everywhere) is a
hit when it picked the strong side (a tie is a miss, as for the judge). The share of hits
has a Wilson 95 % interval, and the verdict is

* ``too_few`` under ``min_votes`` votes, saying how many more it needs;
* ``pass`` when the whole interval lies above the target (70 %), ``fail`` when below;
* ``inconclusive`` when it straddles the target, with the votes that, at the share seen,
  would narrow the interval enough to settle it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import datetime

from arena.contests.proportions import Z95, wilson_interval
from debates.calibration import calibration_start
from debates.models import CrowdChoice, CrowdVote, Debate, other

CROWD_TARGET = 0.70
DEFAULT_MIN_VOTES = 50
TOO_FEW = ("Too few votes to judge the crowd: {votes} counted, {least} needed; "
           "{more} more.")
PASSED = "The crowd picked the stronger side more than {target:.0%} of the time."
FAILED = "The crowd picked the stronger side less than {target:.0%} of the time."
UNSETTLED = ("Not settled: the interval straddles {target:.0%}; about {more} more votes at "
             "this rate would settle it.")
UNSETTLEABLE = ("Not settled: the crowd picks the stronger side at exactly {target:.0%}; no "
                "number of votes at this rate will settle it.")


def crowd_calibration_start(*, count: int, models: list[str] | None = None, rounds: int = 1,
                            word_limit: int = 80,
                            rng: random.Random | None = None) -> list[Debate]:
    return calibration_start(count=count, models=models, rounds=rounds,
                             word_limit=word_limit, rng=rng, listed=True)


@dataclass
class CrowdCalibrationReport:
    debates: int  # calibration debates for the crowd in the window
    voted: int  # of which with a counted vote
    votes: int  # counted votes
    hits: int  # of which for the strong side
    min_votes: int
    target: float = CROWD_TARGET
    by_handicap: dict[str, tuple[int, int]] = field(default_factory=dict)  # (votes, hits)

    @property
    def rate(self) -> float | None:
        return self.hits / self.votes if self.votes else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.hits, self.votes)

    @property
    def verdict(self) -> str:
        if self.votes < self.min_votes:
            return "too_few"
        lower, upper = self.interval
        if lower > self.target:
            return "pass"
        if upper < self.target:
            return "fail"
        return "inconclusive"

    @property
    def votes_needed(self) -> int | None:
        """More votes it needs: to reach ``min_votes``; when inconclusive, at the share seen,
        to narrow the interval off the target (None: the share is the target itself)."""
        if self.votes < self.min_votes:
            return self.min_votes - self.votes
        if self.verdict != "inconclusive":
            return 0
        p = self.rate
        if p == self.target:
            return None
        total = math.ceil(Z95 * Z95 * p * (1 - p) / (p - self.target) ** 2)
        return max(total - self.votes, 1)

    @property
    def message(self) -> str:
        verdict, more = self.verdict, self.votes_needed
        if verdict == "too_few":
            return TOO_FEW.format(votes=self.votes, least=self.min_votes, more=more)
        if verdict == "pass":
            return PASSED.format(target=self.target)
        if verdict == "fail":
            return FAILED.format(target=self.target)
        if more is None:
            return UNSETTLEABLE.format(target=self.target)
        return UNSETTLED.format(target=self.target, more=more)

    def as_json(self) -> dict:
        lower, upper = self.interval
        return {"debates": self.debates, "debates_voted": self.voted, "votes": self.votes,
                "hits": self.hits, "rate": self.rate, "ci_lower": lower, "ci_upper": upper,
                "target": self.target, "min_votes": self.min_votes, "verdict": self.verdict,
                "votes_needed": self.votes_needed, "message": self.message,
                "by_handicap": {k: {"votes": v, "hits": h}
                                for k, (v, h) in self.by_handicap.items()}}


def crowd_calibration_report(*, since: datetime,
                             min_votes: int = DEFAULT_MIN_VOTES) -> CrowdCalibrationReport:
    """The crowd's counted votes since ``since`` on the listed calibration debates."""
    debates = Debate.objects.filter(is_listed=True, created_at__gte=since).exclude(
        handicapped="")
    votes = CrowdVote.objects.filter(
        debate__in=debates, created_at__gte=since, counts_for_rating=True,
        choice__in=(CrowdChoice.PRO, CrowdChoice.CON, CrowdChoice.TIE)).values_list(
        "debate_id", "choice", "debate__handicapped", "debate__handicap")
    hits, voted, by_handicap = 0, set(), {}
    rows = list(votes)
    for debate_id, choice, handicapped, handicap in rows:
        hit = choice == other(handicapped)
        hits += hit
        voted.add(debate_id)
        tally = by_handicap.setdefault(handicap, [0, 0])
        tally[0] += 1
        tally[1] += hit
    return CrowdCalibrationReport(
        debates=debates.count(), voted=len(voted), votes=len(rows), hits=hits,
        min_votes=min_votes, by_handicap={k: (v[0], v[1]) for k, v in by_handicap.items()})

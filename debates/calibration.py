"""Judge and fact-checker calibration (seed 004), made runnable.

:func:`calibration_start` starts debates with a known quality gap: one side is told to argue
its best, the other is handicapped (off topic, fallacious, or told to state a planted false
claim). :func:`calibration_report` then measures, over those that finished:

* the judge's agreement with the expected winner (the strong side; a tie is a miss),
* its position consistency (the same winner whether it read pro or con first),
* the fact-checker's catch rate: planted claims that appeared in a speech and were found
  false or misleading.

Calibration debates count on no board; they are unlisted, except those run for the crowd
(:mod:`debates.crowd_calibration`), which the crowd must find to vote on.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from debates.evidence_store import search_terms
from debates.models import (
    ENDED,
    Debate,
    DebateOrigin,
    DebateStatus,
    FactCheck,
    Handicap,
    JudgeRole,
    Position,
    Verdict,
)
from debates.services import debate_create
from debates.topics import planted_claims

CAUGHT = (Verdict.FALSE, Verdict.MISLEADING)
SAME_CLAIM = 0.5  # share of the planted claim's words a checked claim must have


POLL_SECONDS = 1.0


def calibration_start(*, count: int, models: list[str] | None = None, rounds: int = 1,
                      word_limit: int = 80, rng: random.Random | None = None,
                      listed: bool = False) -> list[Debate]:
    """Start ``count`` calibration debates, cycling through the handicaps; the weak side
    and the models' positions are drawn at random. ``listed``: on /debates/ for the crowd."""
    rng = rng or random.Random()
    claims = planted_claims()
    handicaps = list(Handicap.values)
    started = []
    for index in range(count):
        handicap = handicaps[index % len(handicaps)]
        first, second = (models + [None, None])[:2] if models else (None, None)
        debate = debate_create(
            session_key="", model_a=first, model_b=second, rounds=rounds,
            word_limit=word_limit, fact_checking=True, listed=listed, origin=DebateOrigin.CLI,
            rng=rng, calibration=(rng.choice(Position.values), handicap,
                                  rng.sample(claims, k=min(rounds, len(claims)))
                                  if handicap == Handicap.FALSE_CLAIMS else []))
        started.append(debate)
    return started


def calibration_wait(*, debate_ids: list, timeout: float) -> int:
    """Wait until the debates have ended or ``timeout`` seconds have passed; return how many
    are still running."""
    deadline = time.monotonic() + timeout
    while True:
        running = Debate.objects.filter(pk__in=debate_ids).exclude(status__in=ENDED).count()
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(POLL_SECONDS)


def _same_claim(planted: str, checked: str) -> bool:
    wanted = set(search_terms(planted))
    return bool(wanted) and len(wanted & set(search_terms(checked))) / len(wanted) >= SAME_CLAIM


@dataclass
class CalibrationReport:
    debates: int
    finished: int
    judged: int
    agreed: int
    consistent_pairs: int
    pairs: int
    planted: int
    planted_spoken: int
    caught: int
    by_handicap: dict[str, tuple[int, int]]  # handicap -> (judged, agreed)

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.judged if self.judged else None

    @property
    def consistency(self) -> float | None:
        return self.consistent_pairs / self.pairs if self.pairs else None

    @property
    def catch_rate(self) -> float | None:
        return self.caught / self.planted_spoken if self.planted_spoken else None


def calibration_report(debate_ids) -> CalibrationReport:
    debates = list(Debate.objects.filter(pk__in=list(debate_ids)))
    finished = [d for d in debates if d.status == DebateStatus.COMPLETED]
    judged = [d for d in finished if d.ai_winner]
    by_handicap: dict[str, list[int]] = {}
    agreed = 0
    for debate in judged:
        strong = Position.CON if debate.handicapped == Position.PRO else Position.PRO
        hit = debate.ai_winner == strong
        agreed += hit
        tally = by_handicap.setdefault(debate.handicap, [0, 0])
        tally[0] += 1
        tally[1] += hit
    pairs = consistent = 0
    for debate in finished:
        winners = {}
        for evaluation in debate.evaluations.filter(role=JudgeRole.PRIMARY):
            winners[evaluation.order] = evaluation.winner
        if len(winners) == 2 and all(winners.values()):
            pairs += 1
            consistent += len(set(winners.values())) == 1
    planted = spoken = caught = 0
    for debate in finished:
        weak_turns = debate.turns.filter(position=debate.handicapped)
        texts = " ".join(t.first_speech or t.speech for t in weak_turns).lower()
        checks = list(FactCheck.objects.filter(turn__in=weak_turns).values_list("claim",
                                                                               "verdict"))
        for claim in debate.planted:
            planted += 1
            if not _same_claim(claim, texts):
                continue  # the model did not state it: nothing to catch
            spoken += 1
            caught += any(_same_claim(claim, checked) and verdict in CAUGHT
                          for checked, verdict in checks)
    return CalibrationReport(
        debates=len(debates), finished=len(finished), judged=len(judged), agreed=agreed,
        consistent_pairs=consistent, pairs=pairs, planted=planted, planted_spoken=spoken,
        caught=caught, by_handicap={k: (v[0], v[1]) for k, v in by_handicap.items()})

"""The judge's verdict on a debate: every evaluation stored, the consensus settled (or a
review asked for), the AI board told and the wagers paid out."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from arena import metrics
from arena.errors import RuleError
from debates.crowd import wagers_settle
from debates.models import Debate, DebateStatus, JudgeEvaluation
from debates.signals import debate_verdict_recorded
from debates.streams import announce_debate


def _verdict_of(results) -> tuple[str, bool | None, bool]:
    """``(winner, consensus, tiebreaker_used)`` from the judges' results; ``""`` when no
    judge gave two valid verdicts."""
    from debates.judging import consensus  # noqa: PLC0415 - provider SDKs: workers

    by_role: dict[str, list] = {}
    for role, _, result in results:
        by_role.setdefault(role, []).append(result)
    decided = [(role, rs) for role, rs in by_role.items()
               if role != "tiebreaker" and len(rs) == 2 and all(r.winner for r in rs)]
    if not decided:
        return "", None, False
    role, pair = decided[0]
    winner, agreed = consensus(pair[0].winner, pair[1].winner)
    tiebreak = by_role.get("tiebreaker", [])
    if not agreed and len(tiebreak) == 2 and all(r.winner for r in tiebreak):
        winner, _ = consensus(tiebreak[0].winner, tiebreak[1].winner)
        return winner, False, True
    return winner, agreed, False


def debate_record_verdicts(*, debate_id, results) -> None:
    """Store every evaluation and settle the debate: the consensus winner, or
    ``needs_review`` when no judge could give one (an admin settles it). A debate with no
    independent judge has no AI verdict: it completes, the crowd decides, and every wager
    is given back (nobody can have called a verdict that never comes)."""
    debate = Debate.objects.select_for_update().get(pk=debate_id)
    if debate.judge_model_id is None:
        debate.status, debate.completed_at = DebateStatus.COMPLETED, timezone.now()
        debate.duration_ms = debate.elapsed_ms
        debate.save(update_fields=["status", "completed_at", "duration_ms", "updated_at"])
        wagers_settle(debate=debate)
        _completed(debate)
        return
    JudgeEvaluation.objects.filter(debate=debate).delete()
    JudgeEvaluation.objects.bulk_create([
        JudgeEvaluation(
            debate=debate, judge=judge, role=role, order=r.order, winner=r.winner,
            logical_coherence=r.scores.get("logical_coherence"),
            rebuttal_strength=r.scores.get("rebuttal_strength"),
            factuality=r.scores.get("factuality"), justification=r.justification,
            justification_reasks=r.reasks, justification_short=r.justification_short,
            flagged_fallacies=r.fallacies, attempts=r.attempts, error=r.error[:300],
            latency_ms=r.latency_ms)
        for role, judge, r in results])
    winner, agreed, tiebreak = _verdict_of(results)
    debate.status = DebateStatus.COMPLETED
    debate.completed_at = timezone.now()
    debate.duration_ms = debate.elapsed_ms
    debate.ai_consensus, debate.tiebreaker_used = agreed, tiebreak
    debate.needs_review = not winner
    fields = ["status", "completed_at", "duration_ms", "ai_consensus", "tiebreaker_used",
              "needs_review", "updated_at"]
    debate.save(update_fields=fields)
    if winner:
        debate_settle(debate=debate, winner=winner)
    _completed(debate)


def _completed(debate: Debate) -> None:
    """After commit: pages told, the debate counted for the operators (arena.metrics)."""
    announce_debate(debate.pk, status=debate.status)
    transaction.on_commit(lambda: metrics.debate_event("completed"))


def debate_settle(*, debate: Debate, winner: str) -> None:
    """The AI verdict stands: the AI board hears of it and the wagers are paid out."""
    debate.ai_winner, debate.ai_outcome = winner, debate.outcome_of(winner)
    debate.needs_review = False
    debate.save(update_fields=["ai_winner", "ai_outcome", "needs_review", "updated_at"])
    wagers_settle(debate=debate)
    transaction.on_commit(lambda: debate_verdict_recorded.send(
        sender=Debate, debate=debate, kind="ai"))


def debate_review_settle(*, debate_id, winner: str) -> Debate:
    """An admin's verdict for a debate no judge could settle."""
    if winner not in ("pro", "con", "tie"):
        raise RuleError("The verdict must be pro, con or tie.", status=422)
    with transaction.atomic():
        debate = Debate.objects.select_for_update().get(pk=debate_id)
        if not debate.needs_review:
            raise RuleError("This debate does not need a review.", status=409)
        debate_settle(debate=debate, winner=winner)
        announce_debate(debate.pk, status=debate.status)
    return debate

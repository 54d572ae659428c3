"""Writes of debate mode: starting a debate, moving its state machine on, pausing, resuming,
cancelling, failing and recording the judge's verdict. Votes and wagers: :mod:`debates.crowd`.
"""

from __future__ import annotations

import logging
import random
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone

from arena.errors import RuleError
from arena.steps import StepStatus, step_enqueue
from debates.models import (
    MAX_ROUNDS,
    MAX_WORD_LIMIT,
    MIN_ROUNDS,
    MIN_WORD_LIMIT,
    Debate,
    DebateOrigin,
    DebateStatus,
    DebateStep,
    DebateTurn,
    FactCheck,
    JudgeEvaluation,
    Persona,
    Position,
    StepKind,
    Topic,
    Verdict,
)
from debates.signals import debate_verdict_recorded
from debates.streams import announce_debate
from debates.topics import clean_motion

logger = logging.getLogger(__name__)

INVALID_CONFIGURATION = "This debate cannot start: {problems}"
NOT_ENOUGH_MODELS = ("A debate needs two available models; {count} {verb} available.")
NOT_YOURS = "Only the person who started this debate can pause, resume or cancel it."
CANNOT_PAUSE = "Only a running debate can be paused (this one is {status})."
CANNOT_RESUME = "Only a paused debate can be resumed (this one is {status})."
CANNOT_CANCEL = "This debate is already over ({status})."
CANCELLED = "Cancelled by the person who started it."
NO_PERSONAS = ("The debate library has fewer than two active personas; an admin can load it "
               "with manage.py load_debate_library.")
SPEND_CAP = ("{model} has spent its debate budget for today (${spent:.2f} of ${cap:.2f}); "
             "try other models or come back after midnight UTC.")


def _available_models() -> dict:
    from arena.selectors import model_list_available

    return {m.slug: m for m in model_list_available()}


def _pick_models(model_a: str | None, model_b: str | None, available: dict,
                 problems: list[str], rng: random.Random) -> tuple:
    from arena.models import AIModel

    chosen = []
    for label, slug in (("model_a", model_a), ("model_b", model_b)):
        chosen.append(available.get(slug) if slug else None)
        if slug and slug not in available:
            known = AIModel.objects.filter(pk=slug).exists()
            problems.append(f"{label} {slug!r} is "
                            f"{'not available now' if known else 'not a known model'}")
    if chosen[0] is not None and chosen[1] is not None and chosen[0].pk == chosen[1].pk:
        problems.append("model_a and model_b must be two different models")
    if problems:
        return None, None
    pool = [m for m in available.values() if m not in chosen]
    rng.shuffle(pool)
    filled = [m if m is not None else pool.pop() if pool else None for m in chosen]
    if None in filled:
        raise RuleError(NOT_ENOUGH_MODELS.format(
            count=len(available), verb="is" if len(available) == 1 else "are"), status=503)
    return filled[0], filled[1]


def _pick_personas(persona_a, persona_b, problems: list[str], rng: random.Random) -> tuple:
    active = {str(p.pk): p for p in Persona.objects.filter(is_active=True)}
    chosen = []
    for label, wanted in (("persona_a", persona_a), ("persona_b", persona_b)):
        if not wanted:
            chosen.append(None)
            continue
        persona = active.get(str(wanted)) or next(
            (p for p in active.values() if p.name.lower() == str(wanted).lower()), None)
        if persona is None:
            problems.append(f"{label} {wanted!r} is not an active persona")
        chosen.append(persona)
    if chosen[0] is not None and chosen[0] == chosen[1]:
        problems.append("persona_a and persona_b must be two different personas")
    if problems:
        return None, None
    pool = [p for p in active.values() if p not in chosen]
    rng.shuffle(pool)
    filled = [p if p is not None else pool.pop() if pool else None for p in chosen]
    if None in filled:
        raise RuleError(NO_PERSONAS, status=503)
    return filled[0], filled[1]


def _pick_topic(topic_id, motion: str | None, session_key: str, problems: list[str],
                rng: random.Random) -> Topic | None:
    if topic_id and motion:
        problems.append("give a topic or your own motion, not both")
        return None
    if motion is not None:
        try:
            return Topic(motion=clean_motion(motion), category="Proposed", is_approved=False,
                         proposed_by=session_key)
        except RuleError as exc:
            problems.append(exc.message)
            return None
    public = Topic.objects.filter(is_approved=True, retired_at__isnull=True)
    if topic_id:
        topic = public.filter(pk=topic_id).first() if _is_uuid(topic_id) else None
        if topic is None:
            problems.append(f"topic {topic_id!r} is not an open topic")
        return topic
    # Least-used topics first, so the pool is covered evenly.
    fewest = public.order_by("times_used").values_list("times_used", flat=True).first()
    candidates = list(public.filter(times_used=fewest)) if fewest is not None else []
    if not candidates:
        problems.append("there is no open topic; propose a motion")
        return None
    return rng.choice(candidates)


def _is_uuid(value) -> bool:
    import uuid

    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def choose_judge(model_a, model_b, available: dict) -> tuple:
    """``(judge, is_debater)``: the configured judge, else another available model; a
    debater judges only when no other model is available."""
    debaters = {model_a.pk, model_b.pk}
    preferred = available.get(settings.ARENA_DEBATE_JUDGE_MODEL)
    if preferred is not None and preferred.pk not in debaters:
        return preferred, False
    others = sorted((m for m in available.values() if m.pk not in debaters),
                    key=lambda m: (m.is_local, m.slug))
    if others:
        return others[0], False
    return model_a, True


def judges_for(debate: Debate) -> list[tuple[str, object]]:
    """The primary judge, a fallback judge (another model, a non-debater when one is
    available) and, when configured and available, the tiebreaker."""
    available = _available_models()
    primary = debate.judge_model
    debaters = {debate.model_a_id, debate.model_b_id}
    others = sorted((m for m in available.values() if m.pk != primary.pk),
                    key=lambda m: (m.pk in debaters, m.is_local, m.slug))
    judges: list[tuple[str, object]] = [("primary", primary)]
    if others:
        judges.append(("fallback", others[0]))
    tiebreaker = available.get(settings.ARENA_DEBATE_TIEBREAKER_MODEL)
    if tiebreaker is not None:
        judges.append(("tiebreaker", tiebreaker))
    return judges


def _check_spend(models) -> None:
    cap = settings.ARENA_DEBATE_DAILY_SPEND_USD
    if not cap:
        return
    since = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    today = Debate.objects.filter(created_at__gte=since)
    for model in models:
        spent = ((today.filter(model_a=model).aggregate(s=Sum("cost_a"))["s"] or 0)
                 + (today.filter(model_b=model).aggregate(s=Sum("cost_b"))["s"] or 0))
        if spent >= cap:
            retry = int((since + timedelta(days=1) - timezone.now()).total_seconds()) + 1
            raise RuleError(SPEND_CAP.format(model=model.name, spent=spent, cap=cap),
                            status=429, retry_after=retry)


def debate_create(*, session_key: str = "", model_a: str | None = None,
                  model_b: str | None = None, topic_id=None, motion: str | None = None,
                  persona_a=None, persona_b=None, rounds: int = 3, word_limit: int = 150,
                  fact_checking: bool = True, strict_mode: bool = False, listed: bool = True,
                  origin: str = DebateOrigin.WEB, rng: random.Random | None = None,
                  calibration: tuple[str, str, list[str]] | None = None) -> Debate:
    """Start a debate; every problem with the configuration is named in one 400.
    ``calibration``: ``(weak side, handicap, planted claims)`` (:mod:`debates.calibration`)."""
    rng = rng or random.SystemRandom()
    problems: list[str] = []
    if not MIN_ROUNDS <= rounds <= MAX_ROUNDS:
        problems.append(f"rounds must be {MIN_ROUNDS} to {MAX_ROUNDS} (got {rounds})")
    if not MIN_WORD_LIMIT <= word_limit <= MAX_WORD_LIMIT:
        problems.append(f"word_limit must be {MIN_WORD_LIMIT} to {MAX_WORD_LIMIT} "
                        f"(got {word_limit})")
    if strict_mode and not fact_checking:
        problems.append("strict mode needs fact-checking")
    available = _available_models()
    first, second = _pick_models(model_a, model_b, available, problems, rng)
    pro_persona, con_persona = _pick_personas(persona_a, persona_b, problems, rng)
    topic = _pick_topic(topic_id, motion, session_key, problems, rng)
    if problems:
        raise RuleError(INVALID_CONFIGURATION.format(problems="; ".join(problems) + "."),
                        status=400)
    _check_spend([first, second])
    judge, judge_is_debater = choose_judge(first, second, available)
    with transaction.atomic():
        if topic.pk is None or topic._state.adding:
            topic.save()
        Topic.objects.filter(pk=topic.pk).update(times_used=F("times_used") + 1)
        debate = Debate.objects.create(
            session_key=session_key, origin=origin, topic=topic, model_a=first,
            model_b=second, persona_a=pro_persona, persona_b=con_persona,
            model_a_position=rng.choice([Position.PRO, Position.CON]), rounds=rounds,
            word_limit=word_limit, fact_checking=fact_checking, strict_mode=strict_mode,
            is_listed=listed and calibration is None, judge_model=judge,
            judge_is_debater=judge_is_debater,
            **(dict(zip(("handicapped", "handicap", "planted"), calibration, strict=True))
               if calibration else {}))
        step_enqueue(DebateStep.objects.create(debate=debate, kind=StepKind.MODERATOR, round=1))
    logger.info("debate %s created (%d rounds)", debate.pk, rounds)
    return debate


# --- the state machine -------------------------------------------------------------------------


def _after_speech(debate: Debate, round_: int, position: str) -> tuple:
    if position == Position.PRO:
        return StepKind.TURN, round_, Position.CON, 0
    if round_ < debate.rounds:
        return StepKind.MODERATOR, round_ + 1, "", 0
    return StepKind.JUDGE, 0, "", 0


def following(debate: Debate, step: DebateStep) -> tuple | None:
    """``(kind, round, position, revision)`` of the step after ``step``; None at the end."""
    if step.kind == StepKind.MODERATOR:
        return StepKind.TURN, step.round, Position.PRO, 0
    if step.kind == StepKind.TURN:
        if debate.fact_checking:
            return StepKind.FACT_CHECK, step.round, step.position, step.revision
        return _after_speech(debate, step.round, step.position)
    if step.kind == StepKind.FACT_CHECK:
        if debate.strict_mode and step.revision == 0 and FactCheck.objects.filter(
                turn__debate=debate, turn__round=step.round, turn__position=step.position,
                revision=0, verdict=Verdict.FALSE).exists():
            return StepKind.TURN, step.round, step.position, 1
        return _after_speech(debate, step.round, step.position)
    return None


def _locked(debate_id) -> Debate:
    return Debate.objects.select_for_update().get(pk=debate_id)


def debate_next(*, debate_id) -> DebateStep | None:
    """Create and send the step after the last finished one (once: the step's unique
    constraint and the row lock make a second call a no-op)."""
    with transaction.atomic():
        debate = _locked(debate_id)
        if debate.status not in (DebateStatus.INITIALIZING, DebateStatus.IN_PROGRESS):
            return None
        last = debate.steps.order_by("-created_at", "-pk").first()
        if last is None or last.status != StepStatus.DONE:
            return None
        spec = following(debate, last)
        if debate.status == DebateStatus.INITIALIZING:
            Debate.objects.filter(pk=debate.pk).update(status=DebateStatus.IN_PROGRESS)
        announce_debate(debate.pk, step=str(last.pk))
        if spec is None:
            return None
        kind, round_, position, revision = spec
        step, created = DebateStep.objects.get_or_create(
            debate=debate, kind=kind, round=round_, position=position, revision=revision)
        if created:
            step_enqueue(step)
        return step


def debate_fail(*, debate_id, reason: str) -> None:
    with transaction.atomic():
        debate = _locked(debate_id)
        if debate.is_finished:
            return
        Debate.objects.filter(pk=debate.pk).update(
            status=DebateStatus.FAILED, error=reason[:500],
            duration_ms=_duration(debate))
        announce_debate(debate.pk, status=DebateStatus.FAILED)
    logger.warning("debate %s failed: %s", debate_id, reason)


def _duration(debate: Debate) -> int:
    return round((timezone.now() - debate.created_at).total_seconds() * 1000)


def debate_add_usage(*, debate_id, side: str, tokens: int, cost_usd: float) -> None:
    if not tokens and not cost_usd:
        return
    if side in ("a", "b"):
        fields = {f"tokens_{side}": F(f"tokens_{side}") + tokens,
                  f"cost_{side}": F(f"cost_{side}") + cost_usd}
    else:
        fields = {"tokens_judging": F("tokens_judging") + tokens,
                  "cost_judging": F("cost_judging") + cost_usd}
    Debate.objects.filter(pk=debate_id).update(**fields)


def debate_factuality_refresh(*, debate_id) -> None:
    """The debate's factuality over the claims of every turn's current version."""
    from debates.factcheck import factuality

    verdicts = []
    for turn in DebateTurn.objects.filter(debate_id=debate_id).only("pk", "revised"):
        verdicts += FactCheck.objects.filter(turn=turn, revision=1 if turn.revised else 0) \
            .values_list("verdict", flat=True)
    Debate.objects.filter(pk=debate_id).update(factuality=factuality(verdicts))


def _owned(debate: Debate, session_key: str) -> None:
    if not session_key or debate.session_key != session_key:
        raise RuleError(NOT_YOURS, status=403)


def debate_pause(*, debate_id, session_key: str) -> Debate:
    with transaction.atomic():
        debate = _locked(debate_id)
        _owned(debate, session_key)
        if debate.status not in (DebateStatus.INITIALIZING, DebateStatus.IN_PROGRESS):
            raise RuleError(CANNOT_PAUSE.format(status=debate.get_status_display().lower()),
                            status=409)
        debate.status = DebateStatus.PAUSED
        debate.save(update_fields=["status", "updated_at"])
        announce_debate(debate.pk, status=debate.status)
    return debate


def debate_resume(*, debate_id, session_key: str) -> Debate:
    """Running again: a step that waited is sent again (whichever copy runs first claims it),
    a finished last step moves the debate on."""
    with transaction.atomic():
        debate = _locked(debate_id)
        _owned(debate, session_key)
        if debate.status != DebateStatus.PAUSED:
            raise RuleError(CANNOT_RESUME.format(status=debate.get_status_display().lower()),
                            status=409)
        debate.status = DebateStatus.IN_PROGRESS
        debate.save(update_fields=["status", "updated_at"])
        last = debate.steps.order_by("-created_at", "-pk").first()
        if last is not None and last.status == StepStatus.PENDING:
            step_enqueue(last)
        announce_debate(debate.pk, status=debate.status)
    if last is not None and last.status == StepStatus.DONE:
        debate_next(debate_id=debate.pk)
    return debate


def debate_cancel(*, debate_id, session_key: str) -> Debate:
    with transaction.atomic():
        debate = _locked(debate_id)
        _owned(debate, session_key)
        if debate.is_finished:
            raise RuleError(CANNOT_CANCEL.format(status=debate.get_status_display().lower()),
                            status=409)
        debate.status, debate.error = DebateStatus.FAILED, CANCELLED
        debate.duration_ms = _duration(debate)
        debate.save(update_fields=["status", "error", "duration_ms", "updated_at"])
        # A step still waiting will never run: the sweep must not send it again and again.
        debate.steps.filter(status=StepStatus.PENDING).update(
            status=StepStatus.FAILED, error="The debate was cancelled before this step ran.")
        announce_debate(debate.pk, status=debate.status)
    return debate


def debate_stale_resume(*, older_than_seconds: int | None = None) -> int:
    """Move on debates whose last step finished without a next one (its job died between
    saving and sending); steps themselves are started over by the platform's sweep."""
    seconds = older_than_seconds or settings.ARENA_DEBATE_STALE_SECONDS
    cutoff = timezone.now() - timedelta(seconds=seconds)
    moved = 0
    for debate_id in Debate.objects.filter(
            status__in=[DebateStatus.INITIALIZING, DebateStatus.IN_PROGRESS],
            updated_at__lt=cutoff).values_list("pk", flat=True):
        moved += debate_next(debate_id=debate_id) is not None
    return moved


# --- the verdict -----------------------------------------------------------------------------


def _verdict_of(results) -> tuple[str, bool | None, bool]:
    """``(winner, consensus, tiebreaker_used)`` from the judges' results; ``""`` when no
    judge gave two valid verdicts."""
    from debates.judging import consensus

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
    ``needs_review`` when no judge could give one (an admin settles it)."""
    debate = _locked(debate_id)
    JudgeEvaluation.objects.filter(debate=debate).delete()
    JudgeEvaluation.objects.bulk_create([
        JudgeEvaluation(
            debate=debate, judge=judge, role=role, order=r.order, winner=r.winner,
            logical_coherence=r.scores.get("logical_coherence"),
            rebuttal_strength=r.scores.get("rebuttal_strength"),
            factuality=r.scores.get("factuality"), justification=r.justification,
            flagged_fallacies=r.fallacies, attempts=r.attempts, error=r.error[:300],
            latency_ms=r.latency_ms)
        for role, judge, r in results])
    winner, agreed, tiebreak = _verdict_of(results)
    debate.status = DebateStatus.COMPLETED
    debate.completed_at = timezone.now()
    debate.duration_ms = _duration(debate)
    debate.ai_consensus, debate.tiebreaker_used = agreed, tiebreak
    debate.needs_review = not winner
    fields = ["status", "completed_at", "duration_ms", "ai_consensus", "tiebreaker_used",
              "needs_review", "updated_at"]
    debate.save(update_fields=fields)
    if winner:
        debate_settle(debate=debate, winner=winner)
    announce_debate(debate.pk, status=debate.status)


def debate_settle(*, debate: Debate, winner: str) -> None:
    """The AI verdict stands: the AI board hears of it and the wagers are paid out."""
    from debates.crowd import wagers_settle

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
        debate = _locked(debate_id)
        if not debate.needs_review:
            raise RuleError("This debate does not need a review.", status=409)
        debate_settle(debate=debate, winner=winner)
        announce_debate(debate.pk, status=debate.status)
    return debate

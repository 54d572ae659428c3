"""Writes of debate mode: starting a debate, moving its state machine on, pausing, resuming,
cancelling and failing it. The line-up: :mod:`debates.lineup`; the verdict:
:mod:`debates.verdicts`; votes and wagers: :mod:`debates.crowd`.
"""

from __future__ import annotations

import logging
import random
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from arena import metrics
from arena.alerts.services import alert_event
from arena.errors import RuleError
from arena.steps import StepStatus, step_enqueue
from debates.lineup import (
    available_models,
    check_spend,
    choose_judge,
    debate_pair_pick,
    pick_personas,
    pick_topic,
)
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
    Position,
    StepKind,
    Topic,
    Verdict,
)
from debates.streams import announce_debate

logger = logging.getLogger(__name__)

INVALID_CONFIGURATION = "This debate cannot start: {problems}"
NOT_YOURS = "Only the person who started this debate can pause, resume or cancel it."
CANNOT_PAUSE = "Only a running debate can be paused (this one is {status})."
CANNOT_RESUME = "Only a paused debate can be resumed (this one is {status})."
CANNOT_CANCEL = "This debate is already over ({status})."
CANCELLED = "Cancelled by the person who started it."
# The operators' notice of a failed debate: its id and the reason it shows a person (never
# its motion, its visitor or a key).
DEBATE_FAILED = "Debate {debate_id} failed: {reason}"


def debate_create(*, session_key: str = "", model_a: str | None = None,
                  model_b: str | None = None, topic_id=None, motion: str | None = None,
                  persona_a=None, persona_b=None, rounds: int = 3, word_limit: int = 150,
                  fact_checking: bool = True, strict_mode: bool = False,
                  listed: bool | None = None, origin: str = DebateOrigin.WEB,
                  rng: random.Random | None = None,
                  calibration: tuple[str, str, list[str]] | None = None) -> Debate:
    """Start a debate; every problem with the configuration is named in one 400.
    ``listed`` None: a library topic is listed, a motion the person wrote is not (what people
    type is listed to others only when they say so).
    ``calibration``: ``(weak side, handicap, planted claims)`` (:mod:`debates.calibration`);
    unlisted whatever the topic unless ``listed`` is True, as the crowd's calibration asks."""
    rng = rng or random.SystemRandom()
    problems: list[str] = []
    if not MIN_ROUNDS <= rounds <= MAX_ROUNDS:
        problems.append(f"rounds must be {MIN_ROUNDS} to {MAX_ROUNDS} (got {rounds})")
    if not MIN_WORD_LIMIT <= word_limit <= MAX_WORD_LIMIT:
        problems.append(f"word_limit must be {MIN_WORD_LIMIT} to {MAX_WORD_LIMIT} "
                        f"(got {word_limit})")
    if strict_mode and not fact_checking:
        problems.append("strict mode needs fact-checking")
    available = available_models()
    first, second = debate_pair_pick(model_a, model_b, available, problems, rng)
    pro_persona, con_persona = pick_personas(persona_a, persona_b, problems, rng)
    topic = pick_topic(topic_id, motion, session_key, problems, rng)
    if problems:
        raise RuleError(INVALID_CONFIGURATION.format(problems="; ".join(problems) + "."),
                        status=400)
    check_spend([first, second])
    judge = choose_judge(first, second, available)
    if listed is None:
        listed = motion is None and calibration is None
    with transaction.atomic():
        if topic.pk is None or topic._state.adding:
            topic.save()
        Topic.objects.filter(pk=topic.pk).update(times_used=F("times_used") + 1)
        debate = Debate.objects.create(
            session_key=session_key, origin=origin, topic=topic, model_a=first,
            model_b=second, persona_a=pro_persona, persona_b=con_persona,
            model_a_position=rng.choice([Position.PRO, Position.CON]), rounds=rounds,
            word_limit=word_limit, fact_checking=fact_checking, strict_mode=strict_mode,
            is_listed=listed, judge_model=judge,
            chosen=any((model_a, model_b, persona_a, persona_b)),
            **(dict(zip(("handicapped", "handicap", "planted"), calibration, strict=True))
               if calibration else {}))
        step_enqueue(DebateStep.objects.create(debate=debate, kind=StepKind.MODERATOR, round=1))
    logger.info("debate %s created (%d rounds)", debate.pk, rounds)
    transaction.on_commit(lambda: metrics.debate_event("started"))
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
            duration_ms=debate.elapsed_ms)
        announce_debate(debate.pk, status=DebateStatus.FAILED)
        transaction.on_commit(lambda: metrics.debate_event("failed"))
        alert_event(rule="debate_failed", subject=str(debate.pk),
                    text=DEBATE_FAILED.format(debate_id=debate.pk, reason=reason[:500]))
    logger.warning("debate %s failed: %s", debate_id, reason)


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
    from debates.factcheck import factuality  # noqa: PLC0415 - provider SDKs: workers

    verdicts = []
    for turn in DebateTurn.objects.filter(debate_id=debate_id).only("pk", "revised"):
        verdicts += FactCheck.objects.filter(turn=turn, revision=1 if turn.revised else 0) \
            .values_list("verdict", flat=True)
    Debate.objects.filter(pk=debate_id).update(factuality=factuality(verdicts))


def _creator_only(debate: Debate, session_key: str) -> None:
    if not session_key or debate.session_key != session_key:
        raise RuleError(NOT_YOURS, status=403)


def debate_pause(*, debate_id, session_key: str) -> Debate:
    with transaction.atomic():
        debate = _locked(debate_id)
        _creator_only(debate, session_key)
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
        _creator_only(debate, session_key)
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
        _creator_only(debate, session_key)
        if debate.is_finished:
            raise RuleError(CANNOT_CANCEL.format(status=debate.get_status_display().lower()),
                            status=409)
        debate.status, debate.error = DebateStatus.CANCELLED, CANCELLED
        debate.duration_ms = debate.elapsed_ms
        debate.save(update_fields=["status", "error", "duration_ms", "updated_at"])
        # A step still waiting will never run: the sweep must not send it again and again.
        debate.steps.filter(status=StepStatus.PENDING).update(
            status=StepStatus.FAILED, error="The debate was cancelled before this step ran.")
        announce_debate(debate.pk, status=debate.status)
    return debate


def debate_stalled_sweep(*, older_than_seconds: int | None = None) -> int:
    """Move on running debates whose last step is done with no next one: a resume whose
    process died between its commit and moving on (a step saves itself and the next step in
    one transaction; steps whose worker died are started over by the platform's sweep).
    Returns how many debates moved on."""
    seconds = older_than_seconds or settings.ARENA_DEBATE_STALE_SECONDS
    cutoff = timezone.now() - timedelta(seconds=seconds)
    moved = 0
    for debate_id in Debate.objects.filter(
            status__in=[DebateStatus.INITIALIZING, DebateStatus.IN_PROGRESS],
            updated_at__lt=cutoff).values_list("pk", flat=True):
        moved += debate_next(debate_id=debate_id) is not None
    return moved

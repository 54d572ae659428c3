"""Writes of panel mode and its state machine.

``panel_create`` starts a panel (generating, clarifying or answering); the LLM steps in
:mod:`panels.steps` save their own rows and, in the same transaction, hand their result to
these services: :func:`panel_advance` moves the panel on under a row lock once a stage is
complete:
all answers in -> one judgement per answering model, each in its own shuffled order; all
judgements in -> the verdict and the board's pairwise outcomes. Every transition checks the
status it starts from, so a redelivered task (a worker died) only advances what is left.
"""

from __future__ import annotations

import logging
import random

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from arena.availability import model_availability
from arena.errors import RuleError
from arena.inputs import clean_text
from arena.models import AIModel
from arena.ratelimit import provider_budget
from arena.selectors import model_list_with_availability, prompt_char_limit
from arena.steps import FINISHED, StepStatus, step_enqueue
from panels import verdict as verdict_math
from panels.judging import shuffled_order
from panels.models import (
    ClarificationRound,
    Panel,
    PanelAnswer,
    PanelJudgement,
    PanelOrigin,
    PanelOutcome,
    PanelStatus,
    QuestionSource,
    QuestionStep,
    QuestionStepKind,
    RoundPhase,
)
from panels.signals import panel_outcome_recorded
from panels.streams import announce_panel

logger = logging.getLogger(__name__)

QUESTION_EMPTY = "Write a question first: it cannot be empty."
QUESTION_TOO_LONG = "The question is too long: at most {limit:,} characters (it has {length:,})."
UNKNOWN_MODELS = "Unknown model id(s): {ids}. GET /api/models lists the models that can answer."
NOT_ENOUGH_MODELS = (
    "A panel needs at least two models that can answer, and {count} {verb} available now."
    "{skipped} Start the local models or set a provider key, then try again."
)
QUESTION_MODEL_UNAVAILABLE = (
    "The question model {model} is not available ({reason}). Start it, set "
    "ARENA_PANEL_QUESTION_MODEL to another model, or ask your own question without "
    "clarification."
)
NOT_ENOUGH_ANSWERS = (
    "Only {count} of {total} models answered; a panel needs at least two answers to judge."
    "{failures}"
)
NO_VALID_RANKINGS = (
    "No judge produced a valid ranking, so there is no verdict. Each judge's reason is shown."
)
NOT_WAITING_FOR_ANSWERS = "This panel is not waiting for answers to clarifying questions."
CLARIFICATION_ANSWER_EMPTY = "Answer the clarifying questions, or skip clarification."
CLARIFICATION_ANSWER_TOO_LONG = (
    "The answer is too long: at most {limit:,} characters (it has {length:,}).")
NOT_THE_ASKER = "Only the person who asked this question can clarify it."
QUESTION_GENERATION_FAILED = "The question model could not write a question: {error}"


def _clean_question(question: str) -> str:
    """Every model answers it: at most what the model that reads least can read."""
    return clean_text(question, empty=QUESTION_EMPTY, too_long=QUESTION_TOO_LONG,
                      field="The question", limit=prompt_char_limit(readers=None))


def panel_participants(*, models: list[str] | None = None) -> tuple[list[str], list[dict]]:
    """The models to ask (slugs) and those left out with why.

    Without ``models``: every available model; unavailable ones are reported unless they are
    optional (a hosted model whose key is not set is skipped quietly, as seed 003 does).
    With ``models``: those, in that order; unknown ids are an error, unavailable ones are
    reported and skipped. Blank ids are no ids (``[""]`` is every available model).
    """
    rows = {model.slug: (model, avail) for model, avail in model_list_with_availability()}
    models = list(dict.fromkeys(m.strip() for m in models or [] if m and m.strip()))
    if models:
        wanted = models
        unknown = [slug for slug in wanted if slug not in rows]
        if unknown:
            raise RuleError(UNKNOWN_MODELS.format(ids=", ".join(unknown)), status=422)
    else:
        wanted = list(rows)
    chosen, skipped = [], []
    for slug in wanted:
        model, avail = rows[slug]
        if avail.available:
            chosen.append(slug)
        elif models or not model.optional:
            skipped.append({"model": slug, "name": model.name, "reason": avail.reason})
    if len(chosen) < 2:
        left_out = "; ".join(f"{s['name']}: {s['reason']}" for s in skipped)
        raise RuleError(NOT_ENOUGH_MODELS.format(
            count=len(chosen), verb="is" if len(chosen) == 1 else "are",
            skipped=f" Left out: {left_out}." if left_out else ""), status=503)
    return chosen, skipped


def question_model_get():
    """The configured question model, if it can be used now; else :class:`RuleError`."""
    slug = settings.ARENA_PANEL_QUESTION_MODEL
    model = AIModel.objects.filter(pk=slug).first()
    if model is None:
        raise RuleError(QUESTION_MODEL_UNAVAILABLE.format(
            model=slug, reason="not in the model registry"), status=503)
    availability = model_availability(model)
    if not availability.available:
        raise RuleError(QUESTION_MODEL_UNAVAILABLE.format(
            model=model.name, reason=availability.reason), status=503)
    return model


def panel_create(
    *,
    question: str = "",
    session_key: str = "",
    models: list[str] | None = None,
    clarify: bool = False,
    auto: bool = False,
    origin: str = PanelOrigin.WEB,
    public: bool = False,
) -> Panel:
    """Start a panel. ``auto``: the question model writes the question (then the models
    answer at once); ``clarify``: the question model first checks the person's question;
    ``public``: listed to everyone (else seen by its link and in its asker's list)."""
    text = "" if auto else _clean_question(question)
    participants, skipped = panel_participants(models=models)
    question_model = question_model_get() if (auto or clarify) else None
    _spend_budget(participants, question_model)

    with transaction.atomic():
        panel = Panel.objects.create(
            session_key=session_key or "",
            origin=origin,
            is_public=public,
            question=text,
            original_question=text,
            question_source=QuestionSource.GENERATED if auto else QuestionSource.PERSON,
            question_model=question_model,
            participants=participants,
            skipped=skipped,
            status=(PanelStatus.GENERATING if auto
                    else PanelStatus.CLARIFYING if clarify else PanelStatus.ANSWERING),
        )
        if auto:
            step_enqueue(QuestionStep.objects.create(panel=panel, kind=QuestionStepKind.WRITE))
        elif clarify:
            _open_round(panel, 1)
        else:
            _start_answering(panel)
    logger.info("panel %s created (%s, %d models)", panel.id, panel.status, len(participants))
    return panel


def _spend_budget(participants: list[str], question_model) -> None:
    """Each participant answers once and judges once; the question model helps once."""
    providers = dict(AIModel.objects.filter(pk__in=participants).values_list("pk", "provider"))
    calls = [providers[slug] for slug in participants] * 2
    provider_budget(calls + ([question_model.provider] if question_model else []))


def _open_round(panel: Panel, index: int) -> ClarificationRound:
    round_ = ClarificationRound.objects.create(panel=panel, index=index, question=panel.question)
    step_enqueue(QuestionStep.objects.create(panel=panel, round=round_,
                                             kind=QuestionStepKind.CHECK))
    return round_


def _start_answering(panel: Panel) -> None:
    """Ask every participant the question (the caller holds the transaction)."""
    answers = PanelAnswer.objects.bulk_create(
        [PanelAnswer(panel=panel, model_id=slug) for slug in panel.participants]
    )
    panel.status = PanelStatus.ANSWERING
    panel.save(update_fields=["status", "question", "updated_at"])
    for answer in answers:
        step_enqueue(answer)
    announce_panel(panel.id)


def _locked(panel_id) -> Panel:
    return Panel.objects.select_for_update().get(pk=panel_id)


def _locked_round(round_id) -> tuple[Panel, ClarificationRound]:
    """The round and its panel, locked in the order every writer uses: panel first."""
    panel_id = ClarificationRound.objects.values_list("panel_id", flat=True).get(pk=round_id)
    panel = _locked(panel_id)
    return panel, ClarificationRound.objects.select_for_update().get(pk=round_id)


def _fail(panel: Panel, message: str) -> None:
    panel.status = PanelStatus.FAILED
    panel.error = message[:500]
    panel.finished_at = timezone.now()
    panel.save(update_fields=["status", "error", "finished_at", "updated_at"])
    announce_panel(panel.id)
    logger.warning("panel %s failed: %s", panel.id, message)


# --- the question: generated, or clarified with the person ------------------------------


def panel_question_generated(*, panel_id, question: str | None, error: str = "") -> None:
    """Record the generated question (then ask the models), or the failure to write one."""
    with transaction.atomic():
        panel = _locked(panel_id)
        if panel.status != PanelStatus.GENERATING:
            return
        if not question:
            _fail(panel, QUESTION_GENERATION_FAILED.format(error=error or "empty reply"))
            return
        panel.question = panel.original_question = question
        panel.save(update_fields=["question", "original_question", "updated_at"])
        _start_answering(panel)


def clarification_checked(*, round_id, reply: str, is_clear: bool, error: str = "") -> None:
    """The question model's verdict on the question. A clear question, or a failed call
    (clarification is a help, not a gate), goes straight to the models."""
    with transaction.atomic():
        panel, round_ = _locked_round(round_id)
        if round_.phase != RoundPhase.CHECKING or panel.status != PanelStatus.CLARIFYING:
            return
        round_.reply, round_.is_clear, round_.error = reply, is_clear, error[:300]
        round_.phase = RoundPhase.DONE if (is_clear or error) else RoundPhase.ASKING
        round_.save()
        announce_panel(panel.id)
        if round_.phase == RoundPhase.DONE:
            _start_answering(panel)


def panel_clarification_answer(*, panel: Panel, answer: str, session_key: str = "") -> None:
    """The person answers the clarifying questions of the open round; the model refines."""
    text = clean_text(answer, empty=CLARIFICATION_ANSWER_EMPTY,
                      too_long=CLARIFICATION_ANSWER_TOO_LONG, field="The answer")
    with transaction.atomic():
        panel = _locked(panel.pk)
        round_ = _asking_round(panel, session_key)
        round_.person_answer = text
        round_.phase = RoundPhase.REFINING
        round_.save(update_fields=["person_answer", "phase", "updated_at"])
        step_enqueue(QuestionStep.objects.create(panel=panel, round=round_,
                                                 kind=QuestionStepKind.REFINE))


def panel_clarification_skip(*, panel: Panel, session_key: str = "") -> None:
    """Ask the models the question as it stands now."""
    with transaction.atomic():
        panel = _locked(panel.pk)
        round_ = _asking_round(panel, session_key)
        round_.phase, round_.skipped = RoundPhase.DONE, True
        round_.save(update_fields=["phase", "skipped", "updated_at"])
        _start_answering(panel)


def _asking_round(panel: Panel, session_key: str) -> ClarificationRound:
    if panel.session_key and panel.session_key != session_key:
        raise RuleError(NOT_THE_ASKER, status=403)
    round_ = panel.rounds.select_for_update().order_by("-index").first()
    if panel.status != PanelStatus.CLARIFYING or round_ is None \
            or round_.phase != RoundPhase.ASKING:
        raise RuleError(NOT_WAITING_FOR_ANSWERS, status=409)
    return round_


def clarification_refined(*, round_id, question: str, error: str = "") -> None:
    """The refined question; then another round, or the models once the rounds are used up."""
    with transaction.atomic():
        panel, round_ = _locked_round(round_id)
        if round_.phase != RoundPhase.REFINING or panel.status != PanelStatus.CLARIFYING:
            return
        round_.refined_question = question or ""
        round_.error = error[:300]
        round_.phase = RoundPhase.DONE
        round_.save()
        announce_panel(panel.id)
        if question:
            panel.question = question
            panel.save(update_fields=["question", "updated_at"])
        if question and round_.index < settings.ARENA_PANEL_MAX_CLARIFICATION_ROUNDS:
            _open_round(panel, round_.index + 1)
        else:
            _start_answering(panel)


# --- answers and judgements in, verdict out --------------------------------------------


def panel_advance(*, panel_id, rng: random.Random | None = None) -> None:
    """Move the panel on if its current stage is complete (idempotent)."""
    with transaction.atomic():
        panel = _locked(panel_id)
        if panel.status == PanelStatus.ANSWERING:
            _maybe_start_judging(panel, rng)
        elif panel.status == PanelStatus.JUDGING:
            _maybe_finish(panel)


def _maybe_start_judging(panel: Panel, rng: random.Random | None) -> None:
    answers = list(panel.answers.select_related("model"))
    if not answers or any(a.status not in FINISHED for a in answers):
        return
    done = [a for a in answers if a.status == StepStatus.DONE]
    if len(done) < 2:
        failures = " ".join(f"{a.model.name}: {a.error}" for a in answers
                            if a.status == StepStatus.FAILED)
        _fail(panel, NOT_ENOUGH_ANSWERS.format(count=len(done), total=len(answers),
                                               failures=f" {failures}" if failures else ""))
        return
    keys = [a.model_id for a in done]
    judgements = PanelJudgement.objects.bulk_create([
        PanelJudgement(panel=panel, judge_id=a.model_id,
                       shown_order=list(shuffled_order(keys, rng=rng)))
        for a in done
    ])
    panel.status = PanelStatus.JUDGING
    panel.save(update_fields=["status", "updated_at"])
    for judgement in judgements:
        step_enqueue(judgement)
    announce_panel(panel.id)


def _maybe_finish(panel: Panel) -> None:
    judgements = list(panel.judgements.all())
    if any(j.status not in FINISHED for j in judgements):
        return
    competitors = list(panel.answers.filter(status=StepStatus.DONE)
                       .order_by("model_id").values_list("model_id", flat=True))
    rankings = {j.judge_id: j.ranking for j in judgements if j.is_valid}
    panel.verdict = verdict_math.verdict(competitors, rankings)
    panel.finished_at = timezone.now()
    if not rankings:
        panel.save(update_fields=["verdict", "updated_at"])
        _fail(panel, NO_VALID_RANKINGS)
        return
    panel.status = PanelStatus.DONE
    panel.save(update_fields=["verdict", "status", "finished_at", "updated_at"])
    outcomes = PanelOutcome.objects.bulk_create([
        PanelOutcome(judgement=j, panel=panel, judge_id=j.judge_id, model_a_id=a, model_b_id=b,
                     winner=winner, is_self_vote=j.judge_id in (a, b),
                     created_at=panel.finished_at)
        for j in judgements if j.is_valid
        for a, b, winner in verdict_math.pairwise_outcomes(j.ranking)
    ])
    transaction.on_commit(lambda: _announce(outcomes))
    announce_panel(panel.id)
    logger.info("panel %s done: %d valid rankings of %d", panel.id, len(rankings),
                len(judgements))


def _announce(outcomes: list[PanelOutcome]) -> None:
    """Tell listeners (the leaderboard's panel board) about each committed outcome."""
    for outcome in outcomes:
        panel_outcome_recorded.send(sender=PanelOutcome, outcome=outcome)

"""The steps of panel mode: every model's answer and judgement, and the question model's
writing, checking and refining of the question, each run by :func:`arena.steps.step_run`.

Each step's next-step rule reads its saved row and moves the panel on
(:mod:`panels.services`, in the save's transaction); every one is idempotent, so a task
redelivered after its step finished (its worker died after saving) only advances.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from arena import aio
from arena.contests.leaks import leaked_identity
from arena.llm import (
    ChatMessage,
    Completion,
    LLMError,
    LLMSchemaViolation,
    ModelEndpoint,
    complete_chat,
    complete_json,
)
from arena.models import AIModel
from arena.selectors import model_endpoint
from arena.steps import StepResult, StepStatus, StepWork, step_run
from panels import services
from panels.judging import (
    RankingError,
    Shown,
    build_judge_prompt,
    build_retry_prompt,
    ranking_from,
    ranking_schema,
)
from panels.models import (
    MAX_JUDGE_ATTEMPTS,
    PanelAnswer,
    PanelJudgement,
    QuestionStep,
    QuestionStepKind,
)
from panels.questions import (
    GENERATE_PROMPT,
    build_clarify_prompt,
    build_refine_prompt,
    clean_question,
    reply_is_clear,
)
from panels.streams import announce_step

logger = logging.getLogger(__name__)

EMPTY_ANSWER = "The model sent an empty answer."
EMPTY_REPLY = "(an empty reply)"


def ask(endpoint: ModelEndpoint, prompt: str) -> tuple[Completion | None, str]:
    """One non-streaming call; ``(completion, "")`` or ``(None, message safe to show)``."""
    try:
        return aio.run(complete_chat(endpoint, [{"role": "user", "content": prompt}])), ""
    except LLMError as exc:
        return None, exc.user_message


# --- answers ---------------------------------------------------------------------------


@dataclass
class AnswerJob:
    endpoint: ModelEndpoint
    question: str
    participants: list[AIModel]


def answer_load(answer_id) -> AnswerJob:
    answer = PanelAnswer.objects.select_related("model", "panel").get(pk=answer_id)
    return AnswerJob(endpoint=model_endpoint(answer.model), question=answer.panel.question,
                     participants=list(AIModel.objects.filter(pk__in=answer.panel.participants)))


def answer_work(job: AnswerJob) -> StepResult:
    completion, error = ask(job.endpoint, job.question)
    if completion is None:
        return StepResult(error=error)
    if not completion.text.strip():
        return StepResult(error=EMPTY_ANSWER)
    return StepResult(fields={
        "text": completion.text,
        "names_model": (leaked_identity([completion.text], job.participants) or "")[:100],
        "cut_at_limit": completion.cut_at_limit,
        **PanelAnswer().usage_fields(completion),
    })


def answer_advance(answer: PanelAnswer) -> None:
    announce_step(answer.panel_id, "answer")
    services.panel_advance(panel_id=answer.panel_id)


ANSWER = StepWork(PanelAnswer, load=answer_load, work=answer_work, advance=answer_advance)


def panel_answer_run(*, answer_id: str, generation: int) -> None:
    """One model answers the panel's question."""
    step_run(ANSWER, answer_id, generation)


# --- judgements ------------------------------------------------------------------------


@dataclass
class JudgementJob:
    endpoint: ModelEndpoint
    question: str
    shown: Shown
    answers: dict[str, str]  # model slug -> its answer


def judgement_load(judgement_id) -> JudgementJob:
    judgement = PanelJudgement.objects.select_related("judge", "panel").get(pk=judgement_id)
    panel = judgement.panel
    return JudgementJob(
        endpoint=model_endpoint(judgement.judge), question=panel.question,
        shown=Shown(tuple(judgement.shown_order)),
        answers=dict(panel.answers.filter(status=StepStatus.DONE)
                     .values_list("model_id", "text")))


def judgement_advance(judgement: PanelJudgement) -> None:
    logger.info("panel %s: %s judged (valid=%s)", judgement.panel_id, judgement.judge_id,
                judgement.is_valid)
    announce_step(judgement.panel_id, "judgement")
    services.panel_advance(panel_id=judgement.panel_id)


def call_judge(endpoint: ModelEndpoint, messages: list[ChatMessage],
               shown: Shown) -> tuple[list[str] | None, str, str, str]:
    """Ask for a ranking in the schema the server can enforce (:func:`ranking_schema`).

    ``(ranking, reply, problem, error)``: the ranking (model slugs best first) if the reply
    was a valid one, else ``problem`` says why (for the retry prompt); ``error`` is a provider
    failure, safe to show.
    """
    try:
        result = aio.run(complete_json(endpoint, messages, ranking_schema(shown),
                                       name="ranking", reask=False))
        data, reply, problem = result.data, result.completion.text, ""
    except LLMSchemaViolation as exc:
        # An object of another shape may still be a ranking; if not, say what is wrong with
        # it in the judge's own terms (labels), not the schema's.
        data, reply, problem = exc.data, exc.reply, exc.problem
    except LLMError as exc:
        return None, "", "", exc.user_message
    if data is None:
        return None, reply, problem, ""
    try:
        return ranking_from(data, shown), reply, "", ""
    except RankingError as exc:
        return None, reply, str(exc), ""


def judgement_work(job: JudgementJob) -> StepResult:
    """The judge ranks every answer, shown in its own order under neutral labels.

    A reply that is not a valid ranking is answered once with the error stated; if the
    second reply is not valid either, the judgement is discarded with the reason kept.
    """
    shown = job.shown
    messages: list[ChatMessage] = [
        {"role": "user", "content": build_judge_prompt(job.question, shown, job.answers)}
    ]
    replies: list[str] = []
    reason = ""
    started = time.monotonic()
    for attempt in range(1, MAX_JUDGE_ATTEMPTS + 1):
        ranking, reply, reason, error = call_judge(job.endpoint, messages, shown)
        if error:
            return StepResult(error=error, fields={
                "replies": replies, "attempts": attempt, "is_valid": False, "ranking": None,
                "discard_reason": f"The judge could not be asked: {error}"[:500],
                "latency_ms": _elapsed(started)})
        replies.append(reply)
        if ranking is None:
            messages += [
                {"role": "assistant", "content": reply.strip() or EMPTY_REPLY},
                {"role": "user", "content": build_retry_prompt(reason, shown)},
            ]
            continue
        return StepResult(fields={
            "replies": replies, "attempts": attempt, "is_valid": True, "ranking": ranking,
            "discard_reason": "", "latency_ms": _elapsed(started)})
    return StepResult(fields={
        "replies": replies, "attempts": MAX_JUDGE_ATTEMPTS, "is_valid": False, "ranking": None,
        "discard_reason": (f"Not a valid ranking after {MAX_JUDGE_ATTEMPTS} attempts: "
                           f"{reason}")[:500],
        "latency_ms": _elapsed(started)})


def _elapsed(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


JUDGEMENT = StepWork(PanelJudgement, load=judgement_load, work=judgement_work,
                     advance=judgement_advance)


def panel_judgement_run(*, judgement_id: str, generation: int) -> None:
    """One judge ranks every answer."""
    step_run(JUDGEMENT, judgement_id, generation)


# --- the question model: writing, checking, refining the question ----------------------


@dataclass
class QuestionJob:
    endpoint: ModelEndpoint
    prompt: str


def question_load(step_id) -> QuestionJob:
    step = QuestionStep.objects.select_related("panel__question_model", "round").get(pk=step_id)
    round_ = step.round
    if step.kind == QuestionStepKind.WRITE:
        prompt = GENERATE_PROMPT
    elif step.kind == QuestionStepKind.CHECK:
        prompt = build_clarify_prompt(round_.question)
    else:
        prompt = build_refine_prompt(round_.question, round_.reply, round_.person_answer)
    return QuestionJob(endpoint=model_endpoint(step.panel.question_model), prompt=prompt)


def question_work(job: QuestionJob) -> StepResult:
    completion, error = ask(job.endpoint, job.prompt)
    if completion is None:
        return StepResult(error=error)
    return StepResult(fields={"reply": completion.text,
                              **QuestionStep().usage_fields(completion)})


def question_advance(step: QuestionStep) -> None:
    """Hand the reply to the panel: the question to ask, the check's verdict or the refined
    question (a failed call goes on without it; each service checks the phase it expects)."""
    reply = step.reply.strip() if step.status == StepStatus.DONE else ""
    if step.kind == QuestionStepKind.WRITE:
        services.panel_question_generated(panel_id=step.panel_id, question=clean_question(reply),
                                          error=step.error)
    elif step.kind == QuestionStepKind.CHECK:
        services.clarification_checked(round_id=step.round_id, reply=reply,
                                       is_clear=(step.status == StepStatus.DONE
                                                 and reply_is_clear(reply)),
                                       error=step.error)
    else:
        services.clarification_refined(round_id=step.round_id, question=clean_question(reply),
                                       error=step.error)


QUESTION = StepWork(QuestionStep, load=question_load, work=question_work,
                    advance=question_advance)


def question_step_run(*, step_id: str, generation: int) -> None:
    """The question model writes, checks or refines the panel's question."""
    step_run(QUESTION, step_id, generation)

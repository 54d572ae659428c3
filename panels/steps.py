"""The LLM steps of a panel's answering and judging stages, run by Celery tasks.

Each step loads its row, does nothing if it is stale (an older generation) or finished,
calls the model, saves its own row, then asks :func:`services.panel_advance` to move the
panel on. A step whose row is already finished still advances: that is how a task
redelivered after its worker died after saving, but before advancing, completes the job.
"""

from __future__ import annotations

import logging
import time

from arena import aio
from arena.contests.leaks import leaked_identity
from arena.llm import (
    ChatMessage,
    Completion,
    LLMError,
    LLMSchemaViolation,
    complete_chat,
    complete_json,
)
from arena.selectors import model_endpoint
from arena.steps import FINISHED, StepStatus, release_database, step_claim, step_lease, step_save
from panels import services
from panels.judging import (
    RankingError,
    Shown,
    build_judge_prompt,
    build_retry_prompt,
    ranking_from,
    ranking_schema,
)
from panels.models import MAX_JUDGE_ATTEMPTS, PanelAnswer, PanelJudgement
from panels.streams import announce_step

logger = logging.getLogger(__name__)

UNEXPECTED_FAILURE = "The model could not be asked because of an unexpected error."
EMPTY_REPLY = "(an empty reply)"


def call_model(model, messages: list[ChatMessage]) -> tuple[Completion | None, str]:
    """One non-streaming call; ``(completion, "")`` or ``(None, message safe to show)``."""
    endpoint = model_endpoint(model)
    release_database()
    try:
        return aio.run(complete_chat(endpoint, messages)), ""
    except LLMError as exc:
        return None, exc.user_message
    except Exception:
        logger.exception("call to %s failed unexpectedly", model.slug)
        return None, UNEXPECTED_FAILURE


def panel_answer_generate(*, answer_id: str, generation: int) -> None:
    """One model answers the panel's question."""
    answer = PanelAnswer.objects.select_related("model", "panel").get(pk=answer_id)
    fresh = answer.generation == generation and answer.status not in FINISHED
    if fresh and step_claim(PanelAnswer, answer.pk, generation):
        panel = answer.panel
        with step_lease(PanelAnswer, answer.pk, generation):
            completion, error = call_model(answer.model,
                                           [{"role": "user", "content": panel.question}])
        if completion is not None and not completion.text.strip():
            completion, error = None, "The model sent an empty answer."
        fields: dict = {"status": StepStatus.FAILED, "error": error[:300]}
        if completion is not None:
            from arena.models import AIModel

            others = AIModel.objects.filter(pk__in=panel.participants)
            fields = {
                "status": StepStatus.DONE,
                "error": "",
                "text": completion.text,
                "names_model": (leaked_identity([completion.text], list(others)) or "")[:100],
                **answer.usage_fields(completion),
            }
        if step_save(PanelAnswer, answer.pk, generation, **fields):
            announce_step(answer.panel_id, "answer")
        logger.info("panel %s: %s answered (%s)", panel.id, answer.model_id, fields["status"])
    services.panel_advance(panel_id=answer.panel_id)


def panel_judgement_run(*, judgement_id: str, generation: int) -> None:
    """One judge ranks every answer, shown in its own order under neutral labels.

    A reply that is not a valid ranking is answered once with the error stated; if the
    second reply is not valid either, the judgement is discarded with the reason kept.
    """
    judgement = PanelJudgement.objects.select_related("judge", "panel").get(pk=judgement_id)
    fresh = judgement.generation == generation and judgement.status not in FINISHED
    if fresh and step_claim(PanelJudgement, judgement.pk, generation):
        with step_lease(PanelJudgement, judgement.pk, generation):
            fields = _judge(judgement)
        if step_save(PanelJudgement, judgement.pk, generation, **fields):
            announce_step(judgement.panel_id, "judgement")
        logger.info("panel %s: %s judged (valid=%s)", judgement.panel_id, judgement.judge_id,
                    fields.get("is_valid"))
    services.panel_advance(panel_id=judgement.panel_id)


def call_judge(model, messages: list[ChatMessage], shown: Shown) -> tuple[list[str] | None, str,
                                                                         str, str]:
    """Ask for a ranking in the schema the server can enforce (:func:`ranking_schema`).

    ``(ranking, reply, problem, error)``: the ranking (model slugs best first) if the reply
    was a valid one, else ``problem`` says why (for the retry prompt); ``error`` is a provider
    failure, safe to show.
    """
    endpoint = model_endpoint(model)
    release_database()
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
    except Exception:
        logger.exception("judge %s failed unexpectedly", model.slug)
        return None, "", "", UNEXPECTED_FAILURE
    if data is None:
        return None, reply, problem, ""
    try:
        return ranking_from(data, shown), reply, "", ""
    except RankingError as exc:
        return None, reply, str(exc), ""


def _judge(judgement: PanelJudgement) -> dict:
    panel = judgement.panel
    answers = dict(panel.answers.filter(status=StepStatus.DONE).values_list("model_id", "text"))
    shown = Shown(tuple(judgement.shown_order))
    messages: list[ChatMessage] = [
        {"role": "user", "content": build_judge_prompt(panel.question, shown, answers)}
    ]
    replies: list[str] = []
    reason = ""
    started = time.monotonic()
    for attempt in range(1, MAX_JUDGE_ATTEMPTS + 1):
        ranking, reply, reason, error = call_judge(judgement.judge, messages, shown)
        if error:
            return {"status": StepStatus.FAILED, "error": error[:300], "replies": replies,
                    "attempts": attempt, "is_valid": False, "ranking": None,
                    "discard_reason": f"The judge could not be asked: {error}"[:500],
                    "latency_ms": _elapsed(started)}
        replies.append(reply)
        if ranking is None:
            messages += [
                {"role": "assistant", "content": reply.strip() or EMPTY_REPLY},
                {"role": "user", "content": build_retry_prompt(reason, shown)},
            ]
            continue
        return {"status": StepStatus.DONE, "error": "", "replies": replies, "attempts": attempt,
                "is_valid": True, "ranking": ranking, "discard_reason": "",
                "latency_ms": _elapsed(started)}
    return {"status": StepStatus.DONE, "error": "", "replies": replies,
            "attempts": MAX_JUDGE_ATTEMPTS, "is_valid": False, "ranking": None,
            "discard_reason": (f"Not a valid ranking after {MAX_JUDGE_ATTEMPTS} attempts: "
                               f"{reason}")[:500],
            "latency_ms": _elapsed(started)}


def _elapsed(started: float) -> int:
    return round((time.monotonic() - started) * 1000)

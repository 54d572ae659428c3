"""Celery tasks of panel mode: thin, each runs one step of the state machine.

Late acknowledgement with ``reject_on_worker_lost``: a task whose worker dies is delivered
again, and every step is idempotent (see :mod:`panels.steps`).
"""

from celery import shared_task

STEP = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}


def _run(step, **kwargs) -> None:
    from django.db import close_old_connections

    close_old_connections()
    try:
        step(**kwargs)
    finally:
        close_old_connections()


@shared_task(**STEP)
def panel_answer(answer_id: str, generation: int) -> None:
    from panels.steps import panel_answer_generate

    _run(panel_answer_generate, answer_id=answer_id, generation=generation)


@shared_task(**STEP)
def panel_judge(judgement_id: str, generation: int) -> None:
    from panels.steps import panel_judgement_run

    _run(panel_judgement_run, judgement_id=judgement_id, generation=generation)


@shared_task(**STEP)
def panel_generate_question(panel_id: str) -> None:
    from panels.questions import panel_question_generate

    _run(panel_question_generate, panel_id=panel_id)


@shared_task(**STEP)
def panel_clarification_step(round_id: str) -> None:
    from panels.questions import clarification_step

    _run(clarification_step, round_id=round_id)


@shared_task(ignore_result=True)
def panel_resume_stale() -> int:
    from panels.recovery import panel_resume_stale as resume

    return resume()


__all__ = [
    "panel_answer",
    "panel_clarification_step",
    "panel_generate_question",
    "panel_judge",
    "panel_resume_stale",
]

"""Celery tasks of panel mode: thin, each runs one step of the state machine.

Answers and judgements are platform steps (:func:`arena.steps.step_task`: late ack,
redelivered when a worker is lost, leases and the sweep); every step is idempotent (see
:mod:`panels.steps`).
"""

from celery import shared_task

from arena.steps import step_task


@step_task
def panel_answer(answer_id: str, generation: int) -> None:
    from panels.steps import panel_answer_generate

    panel_answer_generate(answer_id=answer_id, generation=generation)


@step_task
def panel_judge(judgement_id: str, generation: int) -> None:
    from panels.steps import panel_judgement_run

    panel_judgement_run(judgement_id=judgement_id, generation=generation)


@step_task
def panel_generate_question(panel_id: str) -> None:
    from panels.questions import panel_question_generate

    panel_question_generate(panel_id=panel_id)


@step_task
def panel_clarification_step(round_id: str) -> None:
    from panels.questions import clarification_step

    clarification_step(round_id=round_id)


@shared_task(ignore_result=True)
def panel_resume_stale() -> int:
    from panels.recovery import panel_resume_stale as resume

    return resume()

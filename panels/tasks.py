"""Celery tasks of panel mode: thin, each runs one platform step
(:func:`arena.steps.step_task`: late ack, redelivered when a worker is lost, leases and the
sweep) through :mod:`panels.steps`.
"""

from arena.steps import step_task


@step_task
def run_panel_answer(answer_id: str, generation: int) -> None:
    from panels.steps import panel_answer_run

    panel_answer_run(answer_id=answer_id, generation=generation)


@step_task
def run_panel_judgement(judgement_id: str, generation: int) -> None:
    from panels.steps import panel_judgement_run

    panel_judgement_run(judgement_id=judgement_id, generation=generation)


@step_task
def run_question_step(step_id: str, generation: int) -> None:
    from panels.steps import question_step_run

    question_step_run(step_id=step_id, generation=generation)

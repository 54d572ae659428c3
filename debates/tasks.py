"""Celery tasks of debate mode: thin; each runs one step of a debate's state machine."""

from celery import shared_task

from arena.steps import step_task


@step_task
def debate_step(step_id: str, generation: int) -> None:
    from debates.steps import debate_step_run

    debate_step_run(step_id=step_id, generation=generation)


@shared_task(ignore_result=True)
def debate_resume_stale() -> int:
    from debates.services import debate_stale_resume

    return debate_stale_resume()

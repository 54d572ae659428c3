"""Celery tasks of debate mode: thin; each runs one step of a debate's state machine, and
the sweep of debates left without a next step."""

from celery import shared_task

from arena.steps import step_task


@step_task
def run_debate_step(step_id: str, generation: int) -> None:
    from debates.steps import debate_step_run

    debate_step_run(step_id=step_id, generation=generation)


@shared_task(ignore_result=True)
def debate_stalled_sweep() -> int:
    from debates.services import debate_stalled_sweep

    return debate_stalled_sweep()

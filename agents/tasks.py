"""Celery tasks of voice-agent battles: thin; each runs one evaluation stage."""

from arena.steps import step_task


@step_task
def evaluation_step(stage_id: str, generation: int) -> None:
    from agents.evaluation import stage_run

    stage_run(stage_id=stage_id, generation=generation)

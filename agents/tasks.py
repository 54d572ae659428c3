"""Celery tasks of voice-agent battles: thin; one evaluation stage, and the sweep of calls
whose proxy died."""

from celery import shared_task

from arena.steps import step_task


@step_task
def run_evaluation_stage(stage_id: str, generation: int) -> None:
    from agents.steps import evaluation_stage_run

    evaluation_stage_run(stage_id=stage_id, generation=generation)


@shared_task(ignore_result=True)
def conversation_stalled_sweep() -> int:
    from agents.services import conversation_stalled_sweep

    return conversation_stalled_sweep()

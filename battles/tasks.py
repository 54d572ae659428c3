"""Celery tasks of text battles: thin, they call services."""

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def generate_response(response_id: str, generation: int) -> None:
    from django.db import close_old_connections

    from battles.generation import response_generate

    close_old_connections()
    try:
        response_generate(response_id=response_id, generation=generation)
    finally:
        close_old_connections()


@shared_task(ignore_result=True)
def requeue_stale_responses() -> int:
    from battles.services import response_requeue_stale

    return response_requeue_stale()


"""Celery tasks of the platform."""

from celery import shared_task


@shared_task(ignore_result=True)
def steps_requeue_stale() -> int:
    from arena.steps import step_requeue_stale

    return step_requeue_stale()


@shared_task(ignore_result=True)
def sessions_clear_expired() -> None:
    """Django's ``clearsessions``: session rows past their expiry go."""
    from django.core.management import call_command

    call_command("clearsessions")

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


@shared_task(ignore_result=True)
def votes_integrity_sweep() -> dict:
    """Every mode's vote-integrity sweep (:mod:`arena.contests.counting`)."""
    from arena.contests.counting import sweep_all

    return sweep_all()

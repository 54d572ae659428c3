"""Celery tasks of the leaderboard: thin, they call services."""

from contextlib import suppress

from celery import shared_task
from celery.schedules import crontab

# The leaderboard's beat entries (its Mode's beat, see leaderboard.apps).
BEAT = {"leaderboard-hourly": {"task": "leaderboard.tasks.ratings_run_all",
                               "schedule": crontab(minute=0)}}


@shared_task(ignore_result=True)
def ratings_run_all() -> None:
    """The hourly run of every board (celery beat, seed 001)."""
    from leaderboard.models import RunTrigger
    from leaderboard.runs.services import RunInProgress, ratings_run

    # Another run holding a board's lock for two minutes: the next hour comes soon enough.
    with suppress(RunInProgress):
        ratings_run(trigger=RunTrigger.SCHEDULE, lock_wait=120)


@shared_task(bind=True, ignore_result=True, max_retries=10)
def ratings_run_board(self, board_name: str) -> None:
    """The debounced run after new outcomes on one board."""
    from leaderboard.models import RunTrigger
    from leaderboard.runs.services import RunInProgress, debounce_clear, ratings_run

    # Cleared before reading: outcomes committed from now on schedule the next run.
    debounce_clear(board_name=board_name)
    try:
        ratings_run(trigger=RunTrigger.VOTES, boards=[board_name], lock_wait=30)
    except RunInProgress as exc:
        raise self.retry(countdown=15) from exc

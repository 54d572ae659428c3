"""Celery tasks of the open data releases: thin, they call services."""

from celery import shared_task
from celery.schedules import crontab

# Each day at 00:15 UTC, the release of the day that just ended (the Mode's beat, see
# releases.apps).
BEAT = {"releases-daily": {"task": "releases.tasks.release_previous_day",
                           "schedule": crontab(hour=0, minute=15)}}


@shared_task(ignore_result=True)
def release_previous_day() -> None:
    """The release of yesterday (UTC); a day already released is left as it is."""
    from datetime import UTC, timedelta

    from django.utils import timezone

    from releases.services import release_build

    release_build(day=timezone.now().astimezone(UTC).date() - timedelta(days=1))

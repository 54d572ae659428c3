"""Are the background processes there: the Celery workers (their heartbeat,
:mod:`arena.readiness`), celery beat (the time it last sent a scheduled task, stamped by
:mod:`arena.celery`) and the leaderboard's rating runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import redis
from django.conf import settings
from django.db.models import Count, Q

from arena import modes
from arena.readiness import FRESH_SECONDS, beat_last_seen, workers_alive
from leaderboard.models import RatingRun, RunStatus

# Beat is late once it has not sent anything for two of its shortest intervals and this long
# again (a busy machine, a beat restarting).
BEAT_GRACE_SECONDS = 10.0


@dataclass(frozen=True)
class Health:
    state: str  # "ok", "late" (or "none"), "unknown" (Redis did not answer)
    summary: str


def workers_health() -> Health:
    try:
        alive = workers_alive()
    except redis.RedisError:
        return Health("unknown", "Redis does not answer: the workers' heartbeat cannot be read")
    if not alive:
        return Health("late", f"no worker has beaten in the last {FRESH_SECONDS:g} s: "
                              "nothing runs the queue")
    return Health("ok", f"{alive} worker{'s' if alive != 1 else ''} alive")


def _seconds(schedule: object) -> float | None:
    if isinstance(schedule, timedelta):
        return schedule.total_seconds()
    if isinstance(schedule, int | float):
        return float(schedule)
    return None  # a crontab: hourly or daily here, never the shortest


def beat_shortest_interval() -> float | None:
    """The shortest interval of the schedule: the platform's entries and the modes' plain
    ones (the modes that need a crontab name it by a dotted path, which would load Celery
    here; none of them is frequent)."""
    entries = list(settings.CELERY_BEAT_SCHEDULE.values())
    entries += [entry for mode in modes.modes() if isinstance(mode.beat, dict)
                for entry in mode.beat.values()]
    intervals = [s for s in (_seconds(e.get("schedule")) for e in entries) if s]
    return min(intervals, default=None)


def beat_health(*, now: datetime) -> Health:
    try:
        seen = beat_last_seen()
    except redis.RedisError:
        return Health("unknown", "Redis does not answer: beat's last run cannot be read")
    if seen is None:
        return Health("late", "beat has not sent a task in the last week")
    age = max(now.timestamp() - seen, 0.0)
    shortest = beat_shortest_interval()
    late = shortest is not None and age > 2 * shortest + BEAT_GRACE_SECONDS
    every = f" (the schedule's shortest interval: {shortest:g} s)" if shortest else ""
    return Health("late" if late else "ok", f"beat last seen {age:.0f} s ago{every}")


@dataclass(frozen=True)
class RunsHealth:
    last: RatingRun | None
    succeeded_today: int
    failed_today: int


def rating_runs_health(*, now: datetime) -> RunsHealth:
    day = now - timedelta(days=1)
    counts = RatingRun.objects.filter(started_at__gte=day).aggregate(
        ok=Count("pk", filter=Q(status=RunStatus.SUCCEEDED)),
        failed=Count("pk", filter=Q(status=RunStatus.FAILED)))
    return RunsHealth(RatingRun.objects.order_by("-started_at", "-id").first(),
                      counts["ok"], counts["failed"])

"""Every mode's work and votes, as the modes declare them (:mod:`arena.operations`): how much
of each kind of work started in the last hour and day, how much ended well or failed, how
long it took; and the votes of each mode per day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db.models import Count, Q
from django.db.models.functions import TruncDate

from arena import modes
from arena.operations import Work
from ops.figures import DAY, PERCENTILE_SAMPLE, WINDOWS, percentile, rate


@dataclass(frozen=True)
class WorkFigures:
    """One kind of work started in one window: ``started`` counts all of it, ``done`` and
    ``failed`` what ended so; the rest is under way (or ended otherwise, e.g. cancelled).
    Durations are of the work that ended well."""

    started: int
    done: int
    failed: int
    p50_ms: float | None
    p95_ms: float | None

    @property
    def completion_rate(self) -> float | None:
        """Of the work that ended, the share that ended well."""
        return rate(self.done, self.done + self.failed)

    @property
    def unfinished(self) -> int:
        return self.started - self.done - self.failed


@dataclass(frozen=True)
class WorkCompletion:
    mode: str  # the mode's label
    work: str  # the kind of work, e.g. "answers"
    windows: dict[str, WorkFigures]  # by Window.key


def _work_figures(work: Work, *, now: datetime) -> dict[str, WorkFigures]:
    since = {w.key: w.since(now) for w in WINDOWS}
    rows = work.model._default_manager.filter(work.where, **{f"{work.at}__gte": since[DAY.key]})
    done, failed = Q(**{f"{work.status}__in": work.done}), Q(**{f"{work.status}__in": work.failed})
    counts = rows.order_by().aggregate(**{
        f"{name}_{w.key}": Count("pk", filter=Q(**{f"{work.at}__gte": since[w.key]}) & where)
        for w in WINDOWS for name, where in (("started", Q()), ("done", done), ("failed", failed))
    })
    durations: list[tuple[datetime, float]] = []
    if work.duration:
        durations = list(rows.filter(done, **{f"{work.duration}__isnull": False})
                         .order_by(f"-{work.at}").values_list(work.at, work.duration)
                         [:PERCENTILE_SAMPLE])
    out = {}
    for w in WINDOWS:
        inside = [d * work.to_ms for at, d in durations if at >= since[w.key]]
        out[w.key] = WorkFigures(
            started=counts[f"started_{w.key}"], done=counts[f"done_{w.key}"],
            failed=counts[f"failed_{w.key}"],
            p50_ms=percentile(inside, 0.5), p95_ms=percentile(inside, 0.95))
    return out


def modes_completion(*, now: datetime) -> list[WorkCompletion]:
    """Each mode's kinds of work, in navigation order (a mode with no work started in the
    day is listed with zeros: a mode that stopped working is the news)."""
    return [WorkCompletion(mode.label, work.label, _work_figures(work, now=now))
            for mode, declared in modes.operations() for work in declared.work]


@dataclass(frozen=True)
class VoteDays:
    days: list[date]  # oldest first, today last
    per_mode: dict[str, list[int]]  # mode's label → votes on each day

    @property
    def total(self) -> int:
        return sum(sum(counts) for counts in self.per_mode.values())


def modes_votes_per_day(*, now: datetime, days: int = 14) -> VoteDays:
    """The votes of every mode that takes votes, on each of the last ``days`` days (UTC),
    today included."""
    today = now.date()
    first = today - timedelta(days=days - 1)
    start = datetime.combine(first, datetime.min.time(), tzinfo=now.tzinfo)
    day_list = [first + timedelta(days=i) for i in range(days)]
    per_mode = {}
    for mode, declared in modes.operations():
        if declared.votes is None:
            continue
        rows = (declared.votes.model._default_manager
                .filter(declared.votes.where, created_at__gte=start).order_by()
                .annotate(day=TruncDate("created_at")).values("day")
                .annotate(n=Count("pk")))
        by_day = {row["day"]: row["n"] for row in rows}
        per_mode[mode.label] = [by_day.get(day, 0) for day in day_list]
    return VoteDays(day_list, per_mode)

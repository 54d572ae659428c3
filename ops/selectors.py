"""Everything the operations page shows, read at one moment (the page and ``GET /api/ops``
share it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from ops.calls import ModelSpend, ProviderCalls, models_spend_today, providers_calls
from ops.figures import WINDOWS, Window
from ops.health import Health, RunsHealth, beat_health, rating_runs_health, workers_health
from ops.ratings import BoardStability, boards_stability
from ops.work import VoteDays, WorkCompletion, modes_completion, modes_votes_per_day


@dataclass(frozen=True)
class Overview:
    now: datetime
    windows: tuple[Window, ...]
    providers: list[ProviderCalls]
    spend: list[ModelSpend]
    completion: list[WorkCompletion]
    votes: VoteDays
    workers: Health
    beat: Health
    runs: RunsHealth
    boards: list[tuple[str, str, BoardStability | None]]


def operations_overview(*, now: datetime | None = None) -> Overview:
    now = now or timezone.now()
    return Overview(
        now=now, windows=WINDOWS, providers=providers_calls(now=now),
        spend=models_spend_today(now=now), completion=modes_completion(now=now),
        votes=modes_votes_per_day(now=now), workers=workers_health(), beat=beat_health(now=now),
        runs=rating_runs_health(now=now), boards=boards_stability())

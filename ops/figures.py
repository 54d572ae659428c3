"""The windows the page counts in, and the percentile it reports: small shared pieces."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

# Percentiles are taken over at most this many of a window's newest values (per provider or
# per kind of work): enough for a stable p95, and a busy day's page stays quick.
PERCENTILE_SAMPLE = 20_000


@dataclass(frozen=True)
class Window:
    key: str  # "hour", "day"
    label: str
    length: timedelta

    def since(self, now: datetime) -> datetime:
        return now - self.length


HOUR = Window("hour", "last hour", timedelta(hours=1))
DAY = Window("day", "last 24 hours", timedelta(days=1))
WINDOWS = (HOUR, DAY)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank percentile (``q`` in 0..1) of ``values``; None when there are none.
    Nearest rank reports a value that was measured, and with one value it is that value."""
    if not values:
        return None
    ordered = sorted(values)
    return float(ordered[max(math.ceil(q * len(ordered)) - 1, 0)])


def rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None

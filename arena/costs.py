"""What the ledger says the models cost, checked against what a provider billed.

A provider's usage export is a CSV with a row per model (and day, and often per direction,
input or output). Column names differ between providers, so the reader takes the first of
each kind it finds: the model (``model``, ``model_name``, ``line_item``: OpenAI's cost export
writes ``gpt-4o-2024-08-06, input``, whose part before the comma is the model), the cost
(``cost``, ``cost_usd``, ``amount``, ``amount_value``, ``usd``) and, if present, the day
(``date``, ``day``, ``start_time``; a Unix time or an ISO date). A billed model is matched
to the registry by the name sent to the API, or by the arena's id.

:func:`cost_comparison` sums both sides per model over the export's days (or the days
given) and gives the difference; ``manage.py costs`` prints it.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from django.db.models import Sum

from arena.models import AIModel, ModelCall

MODEL_COLUMNS = ("model", "model_name", "line_item", "model_id")
COST_COLUMNS = ("cost", "cost_usd", "amount", "amount_value", "usd")
DAY_COLUMNS = ("date", "day", "start_time", "usage_date")


class UsageExportError(ValueError):
    """The export cannot be read; the message names the file and what is wrong."""


@dataclass(frozen=True)
class CostLine:
    model: str  # the arena's id, or the billed name where no registered model matches
    recorded_usd: float
    billed_usd: float

    @property
    def difference_usd(self) -> float:
        return self.recorded_usd - self.billed_usd


@dataclass(frozen=True)
class Comparison:
    lines: list[CostLine]
    first_day: date | None
    last_day: date | None


def _column(header: list[str], names: tuple[str, ...]) -> str | None:
    lowered = {name.strip().lower(): name for name in header}
    return next((lowered[n] for n in names if n in lowered), None)


def _day(raw: str) -> date:
    raw = raw.strip()
    if raw.replace(".", "", 1).isdigit():
        return datetime.fromtimestamp(float(raw), tz=UTC).date()
    return datetime.fromisoformat(raw.replace("Z", "+00:00")).date()


def billed_per_model(path: Path) -> tuple[dict[str, float], date | None, date | None]:
    """``({billed model name: cost}, first day, last day)`` of a usage export."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UsageExportError(f"{path}: cannot read the export ({exc})") from None
    if not rows:
        raise UsageExportError(f"{path}: the export has no rows")
    header = list(rows[0])
    model_col, cost_col = _column(header, MODEL_COLUMNS), _column(header, COST_COLUMNS)
    day_col = _column(header, DAY_COLUMNS)
    if model_col is None or cost_col is None:
        raise UsageExportError(
            f"{path}: no model column ({', '.join(MODEL_COLUMNS)}) or no cost column "
            f"({', '.join(COST_COLUMNS)}) among {', '.join(header)}")
    billed: dict[str, float] = defaultdict(float)
    days: list[date] = []
    for number, row in enumerate(rows, start=2):
        name = (row.get(model_col) or "").split(",")[0].strip()
        try:
            cost = float(row.get(cost_col) or 0)
            if day_col and row.get(day_col):
                days.append(_day(row[day_col]))
        except ValueError:
            raise UsageExportError(f"{path}: line {number}: a cost or day that is not one "
                                   f"({row.get(cost_col)!r}, {row.get(day_col)!r})") from None
        if name:
            billed[name] += cost
    return dict(billed), min(days, default=None), max(days, default=None)


def cost_comparison(path: Path, *, first_day: date | None = None,
                    last_day: date | None = None) -> Comparison:
    """Recorded against billed cost per model, over the export's days (or those given)."""
    billed_by_name, export_first, export_last = billed_per_model(path)
    first_day, last_day = first_day or export_first, last_day or export_last
    calls = ModelCall.objects.all()
    if first_day:
        calls = calls.filter(created_at__gte=datetime.combine(first_day, datetime.min.time(),
                                                              tzinfo=UTC))
    if last_day:
        calls = calls.filter(created_at__lt=datetime.combine(
            last_day + timedelta(days=1), datetime.min.time(), tzinfo=UTC))
    recorded = {row["model_slug"]: row["total"] or 0.0 for row in
                calls.values("model_slug").annotate(total=Sum("cost_usd"))}
    by_api_name = {m.api_model: m.slug for m in AIModel.objects.all()}
    billed: dict[str, float] = defaultdict(float)
    for name, cost in billed_by_name.items():
        billed[by_api_name.get(name, name)] += cost
    lines = [CostLine(model, recorded.get(model, 0.0), billed.get(model, 0.0))
             for model in sorted(set(recorded) | set(billed))]
    return Comparison(lines, first_day, last_day)

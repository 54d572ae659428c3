"""The providers and the models as the ledger of model calls sees them
(:class:`arena.models.ModelCall`, one row per call of any mode): error rate and latency per
provider over the last hour and day, and each model's spend today against its daily cap."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.apps import apps
from django.db.models import Count, Sum

from arena.llm.ledger import calls_by_provider, start_of_day
from arena.llm.types import FALLBACK, OWN
from arena.models import AIModel, ModelCall
from arena.selectors import model_daily_cap
from ops.figures import DAY, PERCENTILE_SAMPLE, WINDOWS, percentile, rate


@dataclass(frozen=True)
class CallFigures:
    """One provider's calls in one window; latencies are of the calls that succeeded (a
    failure's time is the time to fail: it would hide slow answers behind quick errors)."""

    calls: int
    failed: int
    p50_ms: float | None
    p95_ms: float | None
    ttft_p50_ms: float | None

    @property
    def error_rate(self) -> float | None:
        return rate(self.failed, self.calls)


@dataclass(frozen=True)
class ProviderCalls:
    provider: str
    windows: dict[str, CallFigures]  # by Window.key
    top_error: str  # the day's most frequent error kind ("" if none)


def providers_calls(*, now: datetime) -> list[ProviderCalls]:
    """Every provider called in the last day, most called first."""
    since = {w.key: w.since(now) for w in WINDOWS}
    counts = calls_by_provider(since)
    errors = (ModelCall.objects.filter(created_at__gte=since[DAY.key], ok=False).order_by()
              .values("provider", "error_kind").annotate(n=Count("pk")).order_by("-n"))
    top_error: dict[str, str] = {}
    for row in errors:
        top_error.setdefault(row["provider"], row["error_kind"] or "unknown")
    out = []
    for provider in sorted(counts, key=lambda p: (-counts[p][DAY.key][0], p)):
        timings = list(ModelCall.objects.filter(
            provider=provider, ok=True, created_at__gte=since[DAY.key], latency_ms__isnull=False,
        ).order_by("-created_at").values_list("created_at", "latency_ms", "ttft_ms")
            [:PERCENTILE_SAMPLE])
        windows = {}
        for w in WINDOWS:
            inside = [t for t in timings if t[0] >= since[w.key]]
            ttfts = [t[2] for t in inside if t[2] is not None]
            windows[w.key] = CallFigures(
                calls=counts[provider][w.key][0],
                failed=counts[provider][w.key][1],
                p50_ms=percentile([t[1] for t in inside], 0.5),
                p95_ms=percentile([t[1] for t in inside], 0.95),
                ttft_p50_ms=percentile(ttfts, 0.5))
        out.append(ProviderCalls(provider, windows, top_error.get(provider, "")))
    return out


@dataclass(frozen=True)
class ModelSpend:
    """A model's spend since midnight UTC. The cap holds for each of its endpoints (its own
    provider, its fallback: each is its own bill, :func:`arena.llm.ledger.check_budget`), so
    ``used`` is the fuller endpoint's share of it."""

    slug: str
    name: str
    total_usd: float
    calls: int
    cap_usd: float | None  # 0: no cap; None: the model is no longer registered
    by_mode: list[tuple[str, float]]  # (mode's label, spend), largest first
    by_endpoint: dict[str, float] = field(default_factory=dict)

    @property
    def used(self) -> float | None:
        if not self.cap_usd:
            return None
        return max(self.by_endpoint.get(OWN, 0.0), self.by_endpoint.get(FALLBACK, 0.0)) \
            / self.cap_usd

    @property
    def status(self) -> str:
        used = self.used
        return "" if used is None else "spent" if used >= 1 else "near" if used >= 0.8 else "ok"


def mode_labels() -> dict[str, str]:
    """The ledger's ``mode`` (the app whose work it was) → the mode's label."""
    return {config.label: config.mode.label for config in apps.get_app_configs()
            if hasattr(config, "mode")}


def models_spend_today(*, now: datetime) -> list[ModelSpend]:
    """Every model that spent or called today, the highest spender first."""
    rows = (ModelCall.objects.filter(created_at__gte=start_of_day(now)).order_by()
            .values("model_slug", "mode", "endpoint")
            .annotate(cost=Sum("cost_usd"), calls=Count("pk")))
    per_model: dict[str, dict] = defaultdict(
        lambda: {"modes": defaultdict(float), "endpoints": defaultdict(float), "calls": 0})
    for row in rows:
        entry = per_model[row["model_slug"]]
        entry["modes"][row["mode"]] += row["cost"] or 0.0
        entry["endpoints"][row["endpoint"]] += row["cost"] or 0.0
        entry["calls"] += row["calls"]
    registered = AIModel.objects.in_bulk(list(per_model), field_name="slug")
    labels = mode_labels()
    out = []
    for slug, entry in per_model.items():
        model = registered.get(slug)
        by_mode = sorted(((labels.get(mode, mode or "other"), cost)
                          for mode, cost in entry["modes"].items()), key=lambda mc: -mc[1])
        out.append(ModelSpend(
            slug=slug, name=model.name if model else slug, total_usd=sum(entry["modes"].values()),
            calls=entry["calls"], cap_usd=model_daily_cap(model) if model else None,
            by_mode=by_mode, by_endpoint=dict(entry["endpoints"])))
    out.sort(key=lambda m: (-m.total_usd, m.slug))
    return out

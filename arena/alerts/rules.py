"""The platform's alert rules (seed 004's monitoring section) and the registry of every rule.

- ``provider_failures``: per provider, the share of the window's model calls (the ledger,
  :class:`arena.models.ModelCall`, one row per call whatever its retries) that failed, above
  ``ARENA_ALERT_PROVIDER_FAILURE_RATE``;
- ``daily_cost``: what every call since midnight UTC cost, over
  ``ARENA_ALERT_DAILY_COST_USD`` (0: the rule is off); it clears at midnight, or when the
  budget is raised;
- ``slow_queries``: database queries slower than ``ARENA_ALERT_SLOW_QUERY_MS`` in the window
  (:mod:`arena.alerts.slow_queries`), more than ``ARENA_ALERT_SLOW_QUERIES``.

A mode adds its own through its ``Mode.alerts`` (see :mod:`arena.alerts`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Sum
from django.utils.module_loading import import_string

from arena import modes
from arena.alerts import Reading, Rule, minutes, percent
from arena.alerts.slow_queries import slow_queries_count
from arena.llm.ledger import calls_by_provider, start_of_day
from arena.models import ModelCall

PROVIDER_FAILURES = ("{subject}: {share} of {total} model calls failed in the last {window} "
                     "(alert above {threshold}).")
DAILY_COST = "Model calls cost ${spent:.2f} today (UTC), against a daily budget of ${budget:.2f}."
SLOW_QUERIES = ("{count} database queries took longer than {ms:g} ms in the last {window} "
                "(alert above {threshold}).")


def provider_failures(now: datetime) -> list[Reading]:
    window = settings.ARENA_ALERT_WINDOW_SECONDS
    threshold = settings.ARENA_ALERT_PROVIDER_FAILURE_RATE
    readings = []
    counts = calls_by_provider({"window": now - timedelta(seconds=window)})
    for provider, windows in counts.items():
        total, failed = windows["window"]
        share = failed / total
        # Too few calls say nothing either way: one failure of two calls is 50 % and pages
        # nobody, and the provider's open alert stays open until enough calls show recovery.
        breached = share > threshold if total >= settings.ARENA_ALERT_MIN_CALLS else None
        readings.append(Reading(
            subject=provider, value=share, threshold=threshold, breached=breached,
            text=PROVIDER_FAILURES.format(subject=provider, share=percent(share),
                                          total=total, window=minutes(window),
                                          threshold=percent(threshold))))
    return readings


def daily_cost(now: datetime) -> list[Reading]:
    budget = settings.ARENA_ALERT_DAILY_COST_USD
    if budget <= 0:
        return []
    spent = ModelCall.objects.filter(created_at__gte=start_of_day(now)) \
        .aggregate(s=Sum("cost_usd"))["s"] or 0.0
    return [Reading(subject="", value=spent, threshold=budget, breached=spent > budget,
                    text=DAILY_COST.format(spent=spent, budget=budget))]


def slow_queries(now: datetime) -> list[Reading]:
    window = settings.ARENA_ALERT_WINDOW_SECONDS
    allowed = settings.ARENA_ALERT_SLOW_QUERIES
    count = slow_queries_count(now=now, window_seconds=window)
    return [Reading(subject="", value=count, threshold=allowed, breached=count > allowed,
                    text=SLOW_QUERIES.format(count=count, ms=settings.ARENA_ALERT_SLOW_QUERY_MS,
                                             window=minutes(window), threshold=allowed))]


PLATFORM_RULES = [
    Rule("provider_failures", "Provider failure rate", provider_failures),
    Rule("daily_cost", "Daily cost over budget", daily_cost),
    Rule("slow_queries", "Slow database queries", slow_queries),
]


def alert_rules() -> list[Rule]:
    """The platform's rules and every mode's (``Mode.alerts``); names are unique."""
    found = [*PLATFORM_RULES, *(rule for mode in modes.modes() if mode.alerts
                                for rule in import_string(mode.alerts))]
    names = [rule.name for rule in found]
    if duplicates := {name for name in names if names.count(name) > 1}:
        raise ImproperlyConfigured(f"two alert rules are named {sorted(duplicates)}")
    return found

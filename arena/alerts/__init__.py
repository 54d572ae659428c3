"""Alerts: seed 004's thresholds, evaluated by beat over a sliding window, each raised once
and cleared when it recovers, delivered by e-mail and a Slack-compatible webhook.

A rule is a name and a ``measure``: given the time of the evaluation, it returns one
:class:`Reading` per subject it can judge (a provider; ``""`` for the arena as a whole). The
evaluation (:func:`arena.alerts.services.alerts_evaluate`) raises an alert for a reading that
is breached and has none open, and clears the open one of a reading that is no longer. A
reading whose ``breached`` is ``None`` (too few calls in the window to tell) changes nothing:
silence is not recovery, and a thin sample is not an outage.

The platform's rules (model-call failures per provider, the day's cost, slow database
queries) are in :mod:`arena.alerts.rules`; a mode declares its own in its ``Mode`` (``alerts``,
the dotted path of a list of :class:`Rule`), so the platform imports no mode: debates'
failure rate is :mod:`debates.alerts`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Reading:
    subject: str  # what the measure is of: a provider's name, "" for the whole arena
    value: float
    threshold: float
    breached: bool | None  # None: too little in the window to tell either way
    text: str  # one line for a person: what was measured, over what, against what


@dataclass(frozen=True)
class Rule:
    name: str  # recorded on each alert, e.g. "provider_failures"
    label: str  # said in its messages, e.g. "Provider failure rate"
    measure: Callable[[datetime], list[Reading]]


def percent(share: float) -> str:
    return f"{share * 100:.1f} %"


def minutes(seconds: float) -> str:
    return f"{seconds / 60:g} min"

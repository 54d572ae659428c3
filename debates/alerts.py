"""Debate mode's alert rule (declared to the platform in :mod:`debates.apps`, evaluated with
its own by :mod:`arena.alerts`): seed 004's "debate failure rate above 10 %".

The share is over the debates started in the window that have ended, completed or failed:
one still running has no outcome yet, and a cancelled one failed nobody. Debates take
minutes, so their window (``ARENA_ALERT_DEBATE_WINDOW_SECONDS``) is longer than the model
calls'. Each failed debate also sends its own notice (:func:`debates.services.debate_fail`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from arena.alerts import Reading, Rule, minutes, percent
from debates.selectors import debate_outcomes_since

DEBATE_FAILURES = ("{share} of {ended} debates started in the last {window} failed "
                   "(alert above {threshold}).")


def debate_failures(now: datetime) -> list[Reading]:
    window = settings.ARENA_ALERT_DEBATE_WINDOW_SECONDS
    threshold = settings.ARENA_ALERT_DEBATE_FAILURE_RATE
    ended, failed = debate_outcomes_since(since=now - timedelta(seconds=window))
    if not ended:
        return []
    share = failed / ended
    # A few debates say nothing either way: one failure of two is no outage.
    breached = share > threshold if ended >= settings.ARENA_ALERT_MIN_DEBATES else None
    return [Reading(subject="", value=share, threshold=threshold, breached=breached,
                    text=DEBATE_FAILURES.format(share=percent(share), ended=ended,
                                                window=minutes(window),
                                                threshold=percent(threshold)))]


RULES = [Rule("debate_failures", "Debate failure rate", debate_failures)]

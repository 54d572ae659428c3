"""Writes of the alerts: evaluating every rule (beat, ``arena.tasks.alerts_evaluate``), raising
and clearing their alerts, and recording one-off events such as a failed debate.

An alert's row is written before its notice is sent, and the notice's outcome after: an alert
whose channels all failed is still in the admin's list, with why.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from arena import steps
from arena.alerts import Reading, Rule
from arena.alerts.delivery import notice_deliver
from arena.alerts.rules import alert_rules
from arena.models import Alert

logger = logging.getLogger(__name__)

RAISED = "ALERT {label}"
RESOLVED = "RESOLVED {label}"
DELIVER_TASK = "arena.tasks.alert_deliver"


@dataclass
class Evaluation:
    raised: list[Alert] = field(default_factory=list)
    cleared: list[Alert] = field(default_factory=list)
    failed_rules: list[str] = field(default_factory=list)


def _record_delivery(alert: Alert, errors: list[str], *, notice: str, sent_field: str) -> None:
    """Note the notice's outcome on the alert: when it reached every channel, or each failure."""
    if errors:
        lines = "".join(f"{notice}: {error}\n" for error in errors)
        alert.delivery_error += lines
        Alert.objects.filter(pk=alert.pk).update(delivery_error=alert.delivery_error)
    else:
        setattr(alert, sent_field, timezone.now())
        Alert.objects.filter(pk=alert.pk).update(**{sent_field: getattr(alert, sent_field)})


def alert_raise(*, rule: Rule, reading: Reading, now: datetime) -> Alert | None:
    """Open the rule's alert for the reading's subject and send its notice; None when one is
    open already (another evaluation raised it first: the database's constraint decides)."""
    try:
        with transaction.atomic():
            alert = Alert.objects.create(rule=rule.name, subject=reading.subject,
                                         value=reading.value, threshold=reading.threshold,
                                         message=reading.text, raised_at=now)
    except IntegrityError:
        return None
    errors = notice_deliver(subject=RAISED.format(label=rule.label), text=reading.text)
    _record_delivery(alert, errors, notice="raised", sent_field="notified_at")
    return alert


def alert_clear(*, rule: Rule, alert: Alert, reading: Reading, now: datetime) -> bool:
    """Close an open alert whose measure recovered and send "resolved"; False when another
    evaluation closed it first."""
    if not Alert.objects.filter(pk=alert.pk, cleared_at__isnull=True).update(cleared_at=now):
        return False
    alert.cleared_at = now
    errors = notice_deliver(subject=RESOLVED.format(label=rule.label), text=reading.text)
    _record_delivery(alert, errors, notice="resolved", sent_field="resolved_notified_at")
    return True


def alerts_evaluate(*, rules: list[Rule] | None = None, now: datetime | None = None) -> Evaluation:
    """Measure every rule (or those given) and raise or clear their alerts. A rule whose
    measure fails is logged and skipped; the others are still evaluated."""
    now = now or timezone.now()
    result = Evaluation()
    for rule in alert_rules() if rules is None else rules:
        try:
            readings = rule.measure(now)
        except Exception:
            logger.exception("the alert rule %s could not be measured", rule.name)
            result.failed_rules.append(rule.name)
            continue
        open_alerts = {a.subject: a for a in Alert.objects.filter(rule=rule.name,
                                                                   cleared_at__isnull=True)}
        for reading in readings:
            alert = open_alerts.get(reading.subject)
            if reading.breached and alert is None:
                if raised := alert_raise(rule=rule, reading=reading, now=now):
                    result.raised.append(raised)
            elif reading.breached is False and alert is not None and alert_clear(
                    rule=rule, alert=alert, reading=reading, now=now):
                result.cleared.append(alert)
    return result


def alert_event(*, rule: str, subject: str, text: str) -> Alert:
    """Record a one-off event (over as it happens, so recorded cleared: it never holds a
    rule's place open) and send its notice from a worker once the current transaction
    commits: the caller (a failing debate's step) does not wait for a webhook. A broker that
    cannot take the task is logged (Django's robust on_commit); the event stays recorded,
    its notice unsent."""
    now = timezone.now()
    alert = Alert.objects.create(rule=rule, subject=subject, message=text, raised_at=now,
                                 cleared_at=now)
    transaction.on_commit(lambda: steps.send_task(DELIVER_TASK, [alert.pk]), robust=True)
    return alert


def alert_deliver(*, alert_id: int) -> None:
    """Send an event's notice (``arena.tasks.alert_deliver``), once."""
    alert = Alert.objects.filter(pk=alert_id, notified_at__isnull=True).first()
    if alert is None or alert.delivery_error:
        return  # sent already, or tried (a redelivered task does not send it twice)
    label = alert.rule.replace("_", " ").capitalize()
    errors = notice_deliver(subject=RAISED.format(label=label), text=alert.message)
    _record_delivery(alert, errors, notice="raised", sent_field="notified_at")

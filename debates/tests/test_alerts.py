"""Debate mode's alerts: the failure-rate rule it declares to the platform (debates.alerts,
through its Mode), and the notice each failed debate sends (debates.services.debate_fail),
received by a real local webhook receiver and by e-mail."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from arena.alerts.rules import alert_rules
from arena.alerts.services import alerts_evaluate
from arena.models import Alert
from debates.models import Debate, DebateStatus
from debates.services import DEBATE_FAILED, debate_fail
from debates.tests.debate_support import completed_debate, debate_row
from testkit.waiting import wait_for


def _debates(template: Debate, *, completed: int, failed: int, **fields) -> None:
    for _ in range(completed):
        completed_debate(template, **fields)
    for _ in range(failed):
        completed_debate(template, status=DebateStatus.FAILED, **fields)


@pytest.mark.django_db
def test_debate_failures_above_ten_percent_raise_an_alert(alert_webhook, mailoutbox, settings):
    (rule,) = [r for r in alert_rules() if r.name == "debate_failures"]  # declared by the mode
    settings.ARENA_ALERT_MIN_DEBATES = 5
    template = debate_row()  # in progress: no outcome yet, not counted
    _debates(template, completed=9, failed=1)
    _debates(template, completed=0, failed=5, days_ago=1)  # before the window
    completed_debate(template, status=DebateStatus.CANCELLED)  # a person's choice
    (reading,) = rule.measure(timezone.now())
    assert (reading.value, reading.breached) == (0.1, False)  # 10 % is not above 10 %
    assert alerts_evaluate(rules=[rule]).raised == []

    _debates(template, completed=0, failed=1)
    (alert,) = alerts_evaluate(rules=[rule]).raised
    assert (alert.rule, alert.value, alert.threshold) == (
        "debate_failures", pytest.approx(2 / 11), 0.10)
    assert alert_webhook.texts == [
        "ALERT Debate failure rate\n18.2 % of 11 debates started in the last 60 min failed "
        "(alert above 10.0 %)."]
    assert len(mailoutbox) == 1
    assert alerts_evaluate(rules=[rule]).raised == []  # raised once

    # The failures age out of the window and the debates since went well: resolved.
    Debate.objects.update(created_at=timezone.now() - timedelta(hours=2))
    _debates(template, completed=5, failed=0)
    assert [a.pk for a in alerts_evaluate(rules=[rule]).cleared] == [alert.pk]
    assert alert_webhook.texts[-1].startswith("RESOLVED Debate failure rate\n0.0 % of 5")


@pytest.mark.django_db
def test_a_few_debates_that_failed_raise_no_rate_alert(settings):
    (rule,) = [r for r in alert_rules() if r.name == "debate_failures"]
    settings.ARENA_ALERT_MIN_DEBATES = 5
    _debates(debate_row(), completed=1, failed=3)
    (reading,) = rule.measure(timezone.now())
    assert reading.breached is None and reading.value == 0.75
    assert alerts_evaluate(rules=[rule]).raised == []


def test_a_failed_debate_notifies_the_operators_once(celery_worker, alert_webhook, mailoutbox):
    debate = debate_row(session_key="visitor-session-key-123")
    reason = "Pro turn 1: The model did not answer."
    debate_fail(debate_id=debate.pk, reason=reason)
    expected = "ALERT Debate failed\n" + DEBATE_FAILED.format(debate_id=debate.pk,
                                                               reason=reason)
    assert wait_for(lambda: alert_webhook.texts, 30, what="the webhook's notice") == [expected]
    alert = wait_for(lambda: Alert.objects.filter(notified_at__isnull=False).first(), 30,
                     what="the notice recorded as delivered")
    assert (alert.rule, alert.subject, alert.delivery_error) == (
        "debate_failed", str(debate.pk), "")
    assert alert.cleared_at is not None  # an event: it holds no rule's place open
    assert [m.subject for m in mailoutbox] == ["[Arena] ALERT Debate failed"]
    for sent in (expected, mailoutbox[0].body):  # never the motion or the visitor
        assert debate.topic.motion not in sent and debate.session_key not in sent

    debate_fail(debate_id=debate.pk, reason=reason)  # already failed: nothing new
    assert Alert.objects.count() == 1

"""Alerts (arena.alerts): seed 004's thresholds measured over a sliding window, each raised
once and cleared when it recovers, sent to a real local webhook receiver and by e-mail
(pytest-django's ``mailoutbox``). Debate mode's rule and its failed-debate notice are tested
in debates/tests/test_alerts.py."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone

from arena.alerts import Reading, Rule
from arena.alerts.delivery import WEBHOOK_NO_ANSWER, WEBHOOK_STATUS
from arena.alerts.rules import DAILY_COST, PLATFORM_RULES, alert_rules
from arena.alerts.services import alerts_evaluate
from arena.alerts.slow_queries import slow_queries_count, slow_queries_forget, time_query
from arena.llm import LLMError, stream_chat
from arena.models import Alert, ModelCall
from arena.selectors import model_endpoint
from testkit.fake_providers import Behaviour
from testkit.registry import make_model

pytestmark = pytest.mark.django_db(transaction=True)
HI = [{"role": "user", "content": "Say hi to the operators"}]
RULE = {rule.name: rule for rule in PLATFORM_RULES}
# The provider of these tests' calls, named for them alone: a call some other work of the
# process makes meanwhile (the session's worker, a live server) is another provider's.
PROVIDER = "Alertprov"


@pytest.fixture(autouse=True)
def no_slow_queries_counted(settings):
    """Each test starts with no slow query counted (the count is in the cache, which outlives
    a test's database)."""
    slow_queries_forget(now=timezone.now(), window_seconds=settings.ARENA_ALERT_WINDOW_SECONDS)


def _calls(server, model, *, ok: int, failed: int = 0) -> None:
    """Real calls through the one client to the fake provider: each lands in the ledger."""
    for _ in range(ok):
        asyncio.run(stream_chat(model_endpoint(model), HI))
    for _ in range(failed):
        # Every attempt of the call gets a 500 (the client retries them).
        server.script(*[Behaviour.status(500)] * django_settings.ARENA_LLM_MAX_ATTEMPTS)
        with pytest.raises(LLMError):
            asyncio.run(stream_chat(model_endpoint(model), HI))


def _age_the_ledger(seconds: float) -> None:
    """The window slides on: every call so far happened ``seconds`` earlier."""
    ModelCall.objects.update(created_at=timezone.now() - timedelta(seconds=seconds))


def test_provider_failures_above_the_rate_raise_one_alert_until_they_recover(
        fake_openai, fast_llm_retries, alert_webhook, mailoutbox, settings):
    settings.ARENA_ALERT_MIN_CALLS = 4
    model = make_model(fake_openai, "alpha-7b", provider=PROVIDER)
    _calls(fake_openai, model, ok=3, failed=1)
    assert list(ModelCall.objects.filter(provider=PROVIDER).values_list(
        "ok", flat=True).order_by("ok")) == [False, True, True, True]  # a row per call
    rule = RULE["provider_failures"]

    first = alerts_evaluate(rules=[rule])
    assert [(a.rule, a.subject, a.value) for a in first.raised] == [
        ("provider_failures", PROVIDER, 0.25)]
    assert len(alert_webhook.texts) == 1 and len(mailoutbox) == 1
    text = alert_webhook.texts[0]
    assert text.startswith("ALERT Provider failure rate\n")
    assert f"{PROVIDER}: 25.0 % of 4 model calls failed in the last 15 min" in text
    assert mailoutbox[0].subject == "[Arena] ALERT Provider failure rate"
    assert mailoutbox[0].to == ["ops@example.org"]
    for sent in (text, mailoutbox[0].body):  # never the key, the prompt or the fake's URL
        assert fake_openai.api_key not in sent and "Say hi" not in sent
        assert "127.0.0.1" not in sent

    again = alerts_evaluate(rules=[rule])
    assert again.raised == [] and again.cleared == []
    assert len(alert_webhook.texts) == 1 and len(mailoutbox) == 1
    assert Alert.objects.count() == 1

    # The window slides past the failures: with no calls in it, nothing says it recovered.
    _age_the_ledger(settings.ARENA_ALERT_WINDOW_SECONDS + 60)
    assert alerts_evaluate(rules=[rule]).cleared == []
    _calls(fake_openai, model, ok=4)
    recovered = alerts_evaluate(rules=[rule])
    assert [a.subject for a in recovered.cleared] == [PROVIDER]
    assert len(alert_webhook.texts) == 2 and len(mailoutbox) == 2
    assert alert_webhook.texts[1].startswith("RESOLVED Provider failure rate\n")
    assert f"{PROVIDER}: 0.0 % of 4 model calls failed" in alert_webhook.texts[1]
    alert = Alert.objects.get()
    assert alert.cleared_at is not None and alert.notified_at is not None
    assert alert.resolved_notified_at is not None and alert.delivery_error == ""

    # Failing again later is a new alert: the cleared one is history.
    _age_the_ledger(settings.ARENA_ALERT_WINDOW_SECONDS + 60)
    _calls(fake_openai, model, ok=3, failed=1)
    assert len(alerts_evaluate(rules=[rule]).raised) == 1
    assert Alert.objects.count() == 2 and len(alert_webhook.texts) == 3


def test_under_the_minimum_number_of_calls_a_failure_raises_nothing(
        fake_openai, fast_llm_retries, alert_webhook, mailoutbox, settings):
    settings.ARENA_ALERT_MIN_CALLS = 4
    model = make_model(fake_openai, "alpha-7b", provider=PROVIDER)
    _calls(fake_openai, model, ok=1, failed=2)  # two of three failed, but three calls say little
    readings = {r.subject: r for r in RULE["provider_failures"].measure(timezone.now())}
    reading = readings[PROVIDER]
    assert reading.breached is None and reading.value == pytest.approx(2 / 3)
    assert alerts_evaluate(rules=[RULE["provider_failures"]]).raised == []
    assert alert_webhook.texts == [] and mailoutbox == [] and not Alert.objects.exists()


def _spent(cost: float, *, days_ago: int = 0) -> None:
    ModelCall.objects.create(model_slug="alpha-7b", provider="Fakeprov", ok=True,
                             cost_usd=cost, created_at=timezone.now() - timedelta(days=days_ago))


def test_the_days_cost_over_budget_raises_an_alert_that_a_higher_budget_clears(
        alert_webhook, mailoutbox, settings):
    rule = RULE["daily_cost"]
    settings.ARENA_ALERT_DAILY_COST_USD = 0  # off: not measured at all
    _spent(5.0)
    assert rule.measure(timezone.now()) == []
    settings.ARENA_ALERT_DAILY_COST_USD = 6.0
    _spent(0.6)
    _spent(500.0, days_ago=1)  # yesterday's spend is not today's
    assert alerts_evaluate(rules=[rule]).raised == []  # 5.60 of 6.00
    _spent(0.5)
    (alert,) = alerts_evaluate(rules=[rule]).raised
    assert (alert.value, alert.threshold) == (pytest.approx(6.1), 6.0)
    assert alert_webhook.texts == [
        "ALERT Daily cost over budget\n" + DAILY_COST.format(spent=6.1, budget=6.0)]
    assert "$6.10 today" in mailoutbox[0].body
    settings.ARENA_ALERT_DAILY_COST_USD = 10.0
    assert [a.pk for a in alerts_evaluate(rules=[rule]).cleared] == [alert.pk]
    assert alert_webhook.texts[1].startswith("RESOLVED Daily cost over budget\n")


def _slow_query(seconds: float) -> None:
    """A query that takes ``seconds`` in the database: the slowness is what is measured."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_sleep(%s)", [seconds])
        else:
            connection.ensure_connection()
            connection.connection.create_function(
                "arena_test_sleep", 1, lambda s: time.sleep(s) or 0)
            cursor.execute("SELECT arena_test_sleep(%s)", [seconds])


def test_a_slow_database_query_raises_the_slow_query_alert(alert_webhook, settings):
    settings.ARENA_ALERT_SLOW_QUERY_MS = 300
    connection.ensure_connection()
    assert connection.execute_wrappers.count(time_query) == 1  # every connection, once
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert slow_queries_count(now=timezone.now(), window_seconds=900) == 0
    _slow_query(0.6)
    assert slow_queries_count(now=timezone.now(), window_seconds=900) == 1

    (alert,) = alerts_evaluate(rules=[RULE["slow_queries"]]).raised
    assert (alert.rule, alert.subject, alert.value, alert.threshold) == (
        "slow_queries", "", 1, 0)
    assert "1 database queries took longer than 300 ms in the last 15 min" in \
        alert_webhook.texts[0]
    # Once the slow query is out of the window, it clears.
    later = timezone.now() + timedelta(seconds=settings.ARENA_ALERT_WINDOW_SECONDS + 120)
    assert len(alerts_evaluate(rules=[RULE["slow_queries"]], now=later).cleared) == 1


def test_a_webhook_answering_500_leaves_the_alert_recorded_with_its_delivery_error(
        alert_webhook, mailoutbox, settings):
    alert_webhook.status = 500
    settings.ARENA_ALERT_DAILY_COST_USD = 1.0
    _spent(2.0)
    (alert,) = alerts_evaluate(rules=[RULE["daily_cost"]]).raised
    alert.refresh_from_db()
    assert len(alert_webhook.bodies) == 1  # it was tried, once
    assert alert.delivery_error == "raised: " + WEBHOOK_STATUS.format(status=500) + "\n"
    assert alert.notified_at is None and alert.is_open
    assert len(mailoutbox) == 1  # the other channel still took it
    assert alert_webhook.url not in alert.delivery_error


def test_a_webhook_that_hangs_is_given_up_after_its_timeout_and_recorded(
        alert_webhook, mailoutbox, settings, monkeypatch):
    monkeypatch.setattr("arena.alerts.delivery.WEBHOOK_TIMEOUT_SECONDS", 0.5)
    alert_webhook.hold = True
    settings.ARENA_ALERT_DAILY_COST_USD = 1.0
    _spent(2.0)
    (alert,) = alerts_evaluate(rules=[RULE["daily_cost"]]).raised
    alert.refresh_from_db()
    assert alert.delivery_error == "raised: " + WEBHOOK_NO_ANSWER.format(
        kind="ReadTimeout") + "\n"
    assert len(alert_webhook.bodies) == 1 and len(mailoutbox) == 1


def test_a_webhook_that_refuses_the_connection_is_recorded_too(settings):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    settings.ARENA_ALERT_WEBHOOK_URL = f"http://127.0.0.1:{port}/hook"
    settings.ARENA_ALERT_EMAILS = []
    settings.ARENA_ALERT_DAILY_COST_USD = 1.0
    _spent(2.0)
    (alert,) = alerts_evaluate(rules=[RULE["daily_cost"]]).raised
    alert.refresh_from_db()
    assert alert.delivery_error == "raised: " + WEBHOOK_NO_ANSWER.format(
        kind="ConnectError") + "\n"


def test_a_rule_that_cannot_be_measured_does_not_stop_the_others(alert_webhook, settings):
    def broken(now):
        raise RuntimeError("the measure broke")

    settings.ARENA_ALERT_DAILY_COST_USD = 1.0
    _spent(2.0)
    result = alerts_evaluate(rules=[Rule("broken", "Broken", broken), RULE["daily_cost"]])
    assert result.failed_rules == ["broken"]
    assert [a.rule for a in result.raised] == ["daily_cost"]


def test_the_periodic_task_evaluates_every_rule(alert_webhook, settings):
    from arena.tasks import alerts_evaluate as task

    assert {"provider_failures", "daily_cost", "slow_queries"} <= {
        rule.name for rule in alert_rules()}
    settings.ARENA_ALERT_DAILY_COST_USD = 1.0
    settings.ARENA_ALERT_SLOW_QUERY_MS = 60_000  # nothing this test does is that slow
    _spent(2.0)
    assert task() == {"raised": 1, "cleared": 0, "failed_rules": []}
    assert Alert.objects.get().rule == "daily_cost"


def test_two_evaluations_racing_raise_one_alert():
    """The database holds "raised once": a second open alert of a rule and subject is refused
    (what an evaluation that lost the race sees as "none raised")."""
    from django.db import IntegrityError, transaction

    Alert.objects.create(rule="daily_cost", subject="", message="one")
    with pytest.raises(IntegrityError), transaction.atomic():
        Alert.objects.create(rule="daily_cost", subject="", message="two")
    from arena.alerts.services import alert_raise

    reading = Reading(subject="", value=2, threshold=1, breached=True, text="over")
    assert alert_raise(rule=RULE["daily_cost"], reading=reading, now=timezone.now()) is None


def test_the_admin_lists_the_alerts_by_state(admin_client):
    Alert.objects.create(rule="daily_cost", subject="", message="still over")
    Alert.objects.create(rule="provider_failures", subject="Fakeprov", message="was down",
                         cleared_at=timezone.now())
    page = admin_client.get("/admin/arena/alert/?state=open").content.decode()
    assert "still over" in page and "was down" not in page
    page = admin_client.get("/admin/arena/alert/?state=cleared").content.decode()
    assert "was down" in page and "still over" not in page
    assert admin_client.get("/admin/arena/alert/add/").status_code == 403


INTERVAL = """
import django
django.setup()
from arena.celery import app
entry = app.conf.beat_schedule["arena-alerts-evaluate"]
print(entry["task"], entry["schedule"])
"""


def test_the_beat_schedule_evaluates_the_alerts_at_the_configured_interval():
    result = subprocess.run(
        [sys.executable, "-c", INTERVAL], cwd=django_settings.BASE_DIR, capture_output=True,
        text=True, timeout=120, check=True,
        env={**os.environ, "ARENA_ALERT_INTERVAL_SECONDS": "17",
             "DJANGO_SETTINGS_MODULE": "arena.settings"})
    assert result.stdout.split() == ["arena.tasks.alerts_evaluate", "17.0"]

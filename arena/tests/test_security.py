"""A deployment that is safe by default: the Content-Security-Policy and its reports, the
admin login throttled, expired sessions cleared, and Django's deployment checklist clean."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from arena.tasks import sessions_clear_expired


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/battle/", "/api/models", "/admin/login/"])
def test_every_answer_carries_a_policy_without_inline_script(client: Client, path: str):
    policy = client.get(path)["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert "report-uri" in directives


def test_a_violation_report_is_logged(client: Client, caplog):
    report = {"csp-report": {"document-uri": "http://127.0.0.1/battle/x/",
                             "violated-directive": "img-src",
                             "blocked-uri": "https://tracker.example/p.png"}}
    with caplog.at_level("WARNING", logger="arena.csp"):
        response = client.post("/csp-report", json.dumps(report),
                               content_type="application/csp-report")
    assert response.status_code == 204
    assert "tracker.example" in caplog.text and "img-src" in caplog.text


def test_a_report_that_is_not_one_is_a_400(client: Client):
    response = client.post("/csp-report", "[1, 2]", content_type="application/json")
    assert response.status_code == 400 and "csp-report" in response.json()["detail"]


@pytest.mark.django_db
def test_the_admin_login_locks_an_address_out_after_repeated_failures(admin_user):
    client = Client(REMOTE_ADDR="203.0.113.9")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        wrong = client.post("/admin/login/?next=/admin/",
                            {"username": "admin", "password": "wrong"})
        assert wrong.status_code == 200  # the form again, with Django's message
    locked = client.post("/admin/login/?next=/admin/", {"username": "admin", "password": "no"})
    assert locked.status_code == 429
    assert "Too many wrong passwords" in locked.content.decode()
    # Every 429 says when to come back (issue 33): the cool-off, which a locked attempt
    # starts over (AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT).
    cool_off = int(settings.AXES_COOLOFF_TIME.total_seconds())
    assert locked["Retry-After"] == str(cool_off)
    assert f"{cool_off // 60} minutes" in locked.content.decode()
    # Now even the right password is refused from that address, and only from it.
    right = client.post("/admin/login/?next=/admin/",
                        {"username": "admin", "password": "password"})
    assert right.status_code == 429 and right["Retry-After"] == str(cool_off)
    elsewhere = Client(REMOTE_ADDR="198.51.100.7").post(
        "/admin/login/?next=/admin/", {"username": "admin", "password": "password"})
    assert elsewhere.status_code == 302


@pytest.mark.django_db
def test_expired_sessions_are_cleared_on_a_schedule():
    past, future = timezone.now() - timedelta(days=1), timezone.now() + timedelta(days=1)
    Session.objects.create(session_key="expired" * 4, session_data="x", expire_date=past)
    Session.objects.create(session_key="current" * 4, session_data="x", expire_date=future)
    sessions_clear_expired()
    assert list(Session.objects.values_list("session_key", flat=True)) == ["current" * 4]
    entry = settings.CELERY_BEAT_SCHEDULE["arena-sessions-clear-expired"]
    assert entry["task"] == "arena.tasks.sessions_clear_expired"


PRODUCTION = {"ARENA_ENV": "production", "SECRET_KEY": secrets.token_urlsafe(50),
              "ALLOWED_HOSTS": "arena.example.org"}


def run_check(tmp_path, **env) -> subprocess.CompletedProcess:
    keep = {k: v for k, v in os.environ.items()
            if k not in ("ARENA_ENV", "SECRET_KEY", "ALLOWED_HOSTS", "DEBUG")}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR, env={**keep, "ARENA_VAR_DIR": str(tmp_path), **env},
        capture_output=True, text=True, timeout=120)


def test_the_deployment_checklist_is_clean_with_production_variables(tmp_path):
    result = run_check(tmp_path, **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_the_checklist_sees_through_the_arena_middleware(tmp_path):
    """HSTS and the HTTPS redirect are checked although the middleware is the arena's own."""
    result = run_check(tmp_path, **PRODUCTION, ARENA_HSTS_SECONDS="0", ARENA_SSL_REDIRECT="0")
    assert result.returncode != 0
    assert "security.W004" in result.stderr and "security.W008" in result.stderr


def test_production_refuses_to_start_without_its_hosts(tmp_path):
    result = run_check(tmp_path, ARENA_ENV="production", SECRET_KEY="x" * 60)
    assert result.returncode != 0 and "ALLOWED_HOSTS must be set" in result.stderr

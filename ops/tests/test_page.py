"""The operations page answers staff only, shows every section on an empty arena, and shows
the ledger's figures once there are calls."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from arena.models import ModelCall

pytestmark = pytest.mark.django_db
SECTIONS = ("ops-health", "ops-providers", "ops-spend", "ops-completion", "ops-votes",
            "ops-ratings")


def test_an_anonymous_visitor_is_sent_to_the_admin_login(client):
    response = client.get("/ops/")
    assert response.status_code == 302
    assert response["Location"] == "/admin/login/?next=/ops/"


def test_a_signed_in_visitor_who_is_not_staff_is_sent_to_the_login_too(client,
                                                                       django_user_model):
    client.force_login(django_user_model.objects.create_user("visitor", password="x" * 12))
    assert client.get("/ops/").status_code == 302


def test_staff_see_every_section_of_an_empty_arena(admin_client):
    response = admin_client.get("/ops/")
    assert response.status_code == 200
    assert response["Cache-Control"] == "private, no-store"
    page = response.content.decode()
    for section in SECTIONS:
        assert f'data-testid="{section}"' in page
    for empty in ("No calls yet in the last 24 hours.", "No calls yet today.",
                  "No votes yet in the last 14 days.", "No rating run yet."):
        assert empty in page
    assert "<script>" not in page  # the plots are SVG from the server, not a script


def test_staff_see_a_providers_error_rate_and_a_models_spend(admin_client):
    now = timezone.now()
    for ok, ago in ((True, 0), (False, 2), (True, 90)):
        ModelCall.objects.create(created_at=now - timedelta(minutes=ago), provider="Acme",
                                 model_slug="alpha", mode="battles", ok=ok, latency_ms=250,
                                 cost_usd=0.5, error_kind="" if ok else "timeout")
    page = admin_client.get("/ops/").content.decode()
    assert 'data-provider="Acme"' in page
    assert 'data-figure="hour-error-rate">50.0%<' in page
    assert 'data-figure="day-error-rate">33.3%<' in page
    assert 'data-figure="hour-p50">250 ms<' in page
    assert 'data-model="alpha"' in page and "not registered" in page
    assert "timeout" in page


def test_the_admin_index_links_the_page(admin_client):
    page = admin_client.get("/admin/").content.decode()
    assert 'href="/ops/"' in page
    assert "Site administration" in page  # the admin's own index is still there


def test_the_same_figures_as_json_for_staff_only(client, admin_client):
    from ops.api import STAFF_ONLY

    refused = client.get("/api/ops")
    assert (refused.status_code, refused.json()["detail"]) == (403, STAFF_ONLY)
    ModelCall.objects.create(provider="Acme", model_slug="alpha", mode="battles", ok=False,
                             error_kind="timeout", latency_ms=None)
    figures = admin_client.get("/api/ops").json()
    [acme] = figures["providers"]
    assert acme["provider"] == "Acme" and acme["top_error"] == "timeout"
    assert acme["windows"]["hour"]["error_rate"] == 1.0
    assert acme["windows"]["day"]["p50_ms"] is None  # no call succeeded: no latency
    assert {w["mode"] for w in figures["work"]} >= {"Battle", "Panel", "Debates", "Voice"}
    assert len(figures["votes_per_day"]["days"]) == 14
    assert figures["beat"]["state"] in ("ok", "late", "unknown")

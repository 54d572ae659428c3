"""The operations page in a real Chromium, as staff sign in through the admin's login: every
section there with figures, its plots drawn, nothing from elsewhere, nothing wider than the
screen at 1280 and 390 px. Screenshots in /tmp/shots-ops/."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from arena.models import ModelCall
from battles.tests.factories import answered_battle
from leaderboard.models import RunTrigger
from leaderboard.runs import services
from leaderboard.tests.factories import make_votes
from testkit.browser import assert_unhurt, browser_page, watch_page

pytestmark = pytest.mark.browser
SHOTS = Path("/tmp/shots-ops")
PASSWORD = "an-operator-password"
SECTIONS = ("ops-health", "ops-providers", "ops-spend", "ops-completion", "ops-votes",
            "ops-ratings")


@pytest.fixture
def busy_arena(transactional_db, django_user_model):
    """Staff, a day of calls from two providers, votes and two rating runs of the text board."""
    django_user_model.objects.create_superuser("operator", "op@example.com", PASSWORD)
    now = timezone.now()
    for i in range(30):
        ModelCall.objects.create(  # the first of each model now: both spent today, always
            created_at=now - timedelta(minutes=7 * i if i > 1 else 0),
            provider="Acme" if i % 3 else "Zeta",
            model_slug="alpha" if i % 2 else "beta", mode="battles" if i % 4 else "debates",
            ok=i % 7 != 0, error_kind="" if i % 7 else "timeout", latency_ms=200 + 40 * i,
            ttft_ms=80 + i, cost_usd=0.01 * (i % 5))
    answered_battle()  # two answers written: the battles' work
    make_votes([("alpha", "beta", "model_a", 8), ("beta", "gamma", "model_a", 6),
                ("alpha", "gamma", "tie", 3)])
    assert services.ratings_run(trigger=RunTrigger.COMMAND).status == "succeeded"
    make_votes([("gamma", "alpha", "model_a", 9)])
    assert services.ratings_run(trigger=RunTrigger.COMMAND).status == "succeeded"


@pytest.mark.parametrize("width", [1280, 390])
def test_staff_read_the_operations_page(busy_arena, chromium, asgi_live_server, monkeypatch,
                                        width):
    from playwright.sync_api import expect

    SHOTS.mkdir(exist_ok=True)
    with browser_page(chromium, asgi_live_server, monkeypatch, color_scheme="light",
                      viewport={"width": width, "height": 900}) as page:
        seen = watch_page(page)
        page.goto("/ops/")
        expect(page).to_have_url(re.compile(r"/admin/login/\?next=/ops/$"))  # not staff yet
        page.fill("#id_username", "operator")
        page.fill("#id_password", PASSWORD)
        page.locator("input[type=submit]").click()
        expect(page).to_have_url(re.compile(r"/ops/$"))
        for section in SECTIONS:
            expect(page.get_by_test_id(section)).to_be_visible()
        providers = page.get_by_test_id("ops-providers")
        expect(providers.locator("tr[data-provider]")).to_have_count(2)
        expect(providers.locator('tr[data-provider="Acme"] [data-figure="day-calls"]')
               ).to_have_text("20")
        expect(page.get_by_test_id("ops-spend").locator("tr[data-model]")).to_have_count(2)
        answers = page.locator('[data-testid="ops-completion"] tr[data-work="Battle answers"]')
        expect(answers.locator('[data-figure="hour-started"]')).to_have_text("2")
        expect(answers.locator('[data-figure="hour-completion"]')).to_have_text("100.0%")
        votes = page.locator('svg[data-plot="ops-votes"]')
        expect(votes.locator("polyline")).to_have_count(3)  # battles, debates, voice
        rd = page.locator('svg[data-plot="ops-rd-text"]')
        expect(rd.locator("circle.mark")).to_have_count(2)  # the board's two runs
        text = page.locator('[data-testid="ops-ratings"] tr[data-board="text"]')
        # Both runs rated the three models: how far they moved is a number, not a dash.
        expect(text.locator('[data-figure="mean-move"]')).to_have_text(re.compile(r"^\d+\.\d$"))
        for plot in (votes, rd):
            box = plot.bounding_box()
            assert box and 100 < box["width"] <= width
        page.screenshot(path=str(SHOTS / f"ops-{width}.png"), full_page=True)
        assert_unhurt(page, seen, width=width)

"""Seed 004's figures in a real Chromium: the debate page's round and speaker and a short
justification's mark; the debate board's RD / σ, its controversy and factuality columns
(sorted by a click on their headers) and the token usage tables; a model page's RD and σ;
at desktop and phone widths (screenshots under /tmp/shots-debates37/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.models import AIModel, ProviderKind
from arena.steps import StepStatus
from debates.models import DebateStep, JudgeEvaluation, StepKind
from debates.tests.debate_support import completed_debate, debate_row, justification
from leaderboard.models import RunTrigger
from leaderboard.runs.services import ratings_run
from testkit.browser import browser_page

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots-debates37")
WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def figures(asgi_live_server, settings):
    """A debate with CON speaking in round 2; judged debates between three models (one
    with a short justification); both debate boards rated."""
    settings.ARENA_LEADERBOARD_MIN_VOTES = 1
    under_way = debate_row(rounds=3)
    DebateStep.objects.create(debate=under_way, kind=StepKind.TURN, round=2, position="con",
                              status=StepStatus.RUNNING)
    third = AIModel.objects.create(slug="row-c", name="row-c", api_model="row-c",
                                   provider="P", provider_kind=ProviderKind.OPENAI)
    a, b = under_way.model_a, under_way.model_b
    usage = {"tokens_a": 900, "tokens_b": 800, "tokens_judging": 300, "cost_a": 0.001,
             "cost_b": 0.001, "cost_judging": 0.0005}
    for days in (3, 2, 1):
        completed_debate(under_way, a, b, ai="pro", crowd="con", days_ago=days,
                         factuality=(0.9, 0.5), **usage)
        completed_debate(under_way, b, third, ai="tie", crowd="tie", days_ago=days,
                         factuality=(0.5, 0.2), rounds=1, **usage)
    judged = completed_debate(under_way, a, b, judge_model=third, ai_consensus=False,
                              factuality=(0.9, 0.5), **usage)
    JudgeEvaluation.objects.create(debate=judged, judge=third, order="pro_first",
                                   winner="pro", justification=justification("pro", 40),
                                   logical_coherence=7, rebuttal_strength=6, factuality=8,
                                   justification_reasks=2, justification_short=True)
    ratings_run(trigger=RunTrigger.COMMAND, boards=["debate-ai", "debate-crowd"])
    SHOTS.mkdir(parents=True, exist_ok=True)
    return asgi_live_server, under_way, judged


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_figures_show_and_sort_in_the_browser(chromium, figures, monkeypatch, width):
    from playwright.sync_api import expect

    base_url, under_way, judged = figures
    with browser_page(chromium, base_url, monkeypatch, viewport=WIDTHS[width]) as page:
        page.goto(f"/debates/{under_way.pk}/")
        progress = page.get_by_test_id("progress")
        expect(progress).to_have_text("Round 2 of 3 · CON speaking")
        page.screenshot(path=str(SHOTS / f"debate-live-{width}.png"), full_page=True)
        page.goto(f"/debates/{judged.pk}/")
        page.get_by_text("justification (short)").click()
        expect(page.get_by_test_id("justification-short")).to_be_visible()
        page.screenshot(path=str(SHOTS / f"debate-judged-{width}.png"), full_page=True)

        page.goto("/leaderboard/?board=debate-ai")
        expect(page.get_by_test_id("glicko-header")).to_be_visible()
        page.get_by_test_id("sort-factuality").click()
        expect(page).to_have_url(base_url + "/leaderboard/?board=debate-ai&sort=factuality"
                                 "&order=desc")
        models = page.locator('[data-testid="leaderboard-table"] tbody tr')
        expect(models).to_have_count(3)
        assert [models.nth(i).get_attribute("data-model") for i in range(3)] == [
            "row-a", "row-b", "row-c"]
        page.get_by_test_id("sort-factuality").click()  # again: ascending
        expect(models.first).to_have_attribute("data-model", "row-c")
        expect(page.get_by_test_id("usage-category")).to_be_visible()
        expect(page.get_by_test_id("usage-rounds")).to_contain_text("3 rounds")
        page.screenshot(path=str(SHOTS / f"leaderboard-debate-ai-{width}.png"),
                        full_page=True)
        page.goto("/models/row-a/")
        expect(page.get_by_test_id("volatility-debate-ai")).to_contain_text("σ 0.0")
        page.screenshot(path=str(SHOTS / f"model-page-{width}.png"), full_page=True)

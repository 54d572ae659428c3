"""The debate pages in a real Chromium, against daphne, a real Celery worker and the fake
provider: start a debate, watch it stream and get fact-checked, vote and wager blind, read
the verdict and the payout, then see the debate boards. Every wait is Playwright's
auto-waiting (``expect``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from debates.models import Debate
from debates.tests.debate_support import (
    DebateScript,
    library,
    make_model,
    quiet_rating_runs,
    wait_for,
    worker_idle,
)
from testkit.browser import browser_page

pytestmark = pytest.mark.browser

DEBATE_URL = re.compile(r"/debates/[0-9a-f-]{36}/$")
SCREENSHOT = Path("/tmp/debate.png")


@pytest.fixture
def setup(asgi_live_server, celery_worker, fake_openai, monkeypatch):
    """Three models speaking slowly enough to watch (no key: daphne started before the fake
    server's key was set); the third judges, as it is the one not debating."""
    quiet_rating_runs(monkeypatch)
    fake_openai.reply_text = DebateScript()
    fake_openai.token_delay = 0.15
    fake_openai.api_key = None
    for slug in ("alpha-7b", "beta-3b", "gamma-1b"):
        make_model(fake_openai, slug, api_key_env="")
    yield library()
    wait_for(worker_idle)


@pytest.fixture
def page(chromium, setup, asgi_live_server, monkeypatch) -> Iterator[object]:
    with browser_page(chromium, asgi_live_server, monkeypatch,
                      viewport={"width": 1280, "height": 900}) as page:
        yield page


def test_start_watch_vote_with_a_wager_and_read_the_verdict(page, setup):
    from playwright.sync_api import expect

    topic, first, second = setup
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
    page.goto("/debates/new/")
    page.get_by_test_id("model-a").select_option("alpha-7b")
    page.get_by_test_id("model-b").select_option("beta-3b")
    page.get_by_test_id("persona-a").select_option(str(first.pk))
    page.get_by_test_id("persona-b").select_option(str(second.pk))
    page.get_by_test_id("topic").select_option(str(topic.pk))
    page.get_by_test_id("rounds").fill("1")
    page.get_by_test_id("word-limit").fill("60")
    page.get_by_test_id("start").click()
    expect(page).to_have_url(DEBATE_URL)
    expect(page.get_by_test_id("motion")).to_have_text(topic.motion)
    # The speech streams in as it is written, then the saved turn takes its place.
    expect(page.get_by_test_id("writing").first).to_contain_text("Speaker-pro-1")
    # Seed 004's currentRound / currentSpeaker, live: the side speaking now.
    progress = page.get_by_test_id("progress")
    expect(progress).to_have_attribute("data-current-round", "1")
    expect(page.get_by_test_id("turn-1-pro")).to_contain_text("Speaker-pro-1 argues.")
    expect(page.get_by_test_id("model-pro")).to_have_text("Model hidden until you vote")
    # Vote and wager before judging starts.
    page.get_by_test_id("wager").fill("250")
    page.get_by_test_id("vote-pro").click()
    expect(page.get_by_test_id("your-vote")).to_contain_text("You voted PRO and wagered 250")
    expect(page.get_by_test_id("model-pro")).to_contain_text(re.compile(r"Alpha|Beta"))
    expect(page.get_by_test_id("points")).to_have_text("Your debate points: 750")
    # Fact-checks, the verdict, the payout: all pushed over the socket.
    expect(page.get_by_test_id("turn-1-con").get_by_test_id("verdict").first).to_have_text(
        "Verified")
    expect(page.get_by_test_id("ai-winner")).to_contain_text("PRO wins")
    expect(page.get_by_test_id("payout")).to_have_text("250")
    expect(page.get_by_test_id("points")).to_have_text("Your debate points: 1000")
    expect(page.get_by_test_id("status")).to_have_text("Completed")
    expect(progress).to_have_attribute("data-current-speaker", "")
    expect(progress).to_have_attribute("data-current-round", "1")
    expect(progress).to_be_hidden()  # the status says it ended
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    debate = Debate.objects.get()
    assert debate.judge_model_id == "gamma-1b"
    # Blind means blind: no frame of the stream named a model.
    assert any('"delta"' in f for f in frames)
    assert any('"currentSpeaker": "con"' in f for f in frames)  # the stream says who speaks
    assert any('"event": "progress"' in f and '"currentRound"' in f for f in frames)
    for name in ("alpha", "beta", "gamma", "Alpha", "Beta", "Gamma"):
        assert not any(name in f for f in frames), name


def test_the_form_names_every_problem_and_keeps_the_page(page, setup):
    from playwright.sync_api import expect

    page.goto("/debates/new/")
    page.get_by_test_id("model-a").select_option("alpha-7b")
    page.get_by_test_id("model-b").select_option("alpha-7b")
    page.get_by_test_id("topic").select_option("own")
    page.get_by_test_id("motion").fill("Too short")
    page.get_by_test_id("start").click()
    error = page.get_by_test_id("error")
    expect(error).to_contain_text("two different models")
    expect(error).to_contain_text("at least 4 words")
    expect(page).to_have_url(re.compile(r"/debates/new/$"))
    assert not Debate.objects.exists()


def test_a_viewer_who_reveals_cannot_vote(page, setup, chromium, asgi_live_server):
    from playwright.sync_api import expect

    from debates import services

    topic, first, second = setup
    debate = services.debate_create(model_a="alpha-7b", model_b="beta-3b",
                                    topic_id=str(topic.pk), rounds=1, word_limit=60,
                                    fact_checking=False)
    page.goto(f"/debates/{debate.pk}/")
    expect(page.get_by_test_id("turn-1-pro")).to_be_visible()
    page.on("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id("reveal").click()
    expect(page.get_by_test_id("revealed")).to_be_visible()
    expect(page.get_by_test_id("model-pro")).to_contain_text(re.compile(r"Alpha|Beta"))
    expect(page.get_by_test_id("vote-form")).to_have_count(0)

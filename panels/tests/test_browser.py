"""The panel page in a real Chromium, against daphne, a real Celery worker and fake providers.

Chromium and daphne come from testkit (browser.py, live.py). Every wait in the tests
is Playwright's auto-waiting (``expect``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from panels.models import Panel, PanelStatus
from panels.tests.panel_support import PanelScript, make_model
from testkit.browser import browser_page
from testkit.ratings import quiet_rating_runs

pytestmark = pytest.mark.browser

PANEL_URL = re.compile(r"/panel/[0-9a-f-]{36}/$")
PANEL_SOCKET = re.compile(r"/ws/panels/[0-9a-f-]{36}/$")
SCREENSHOT = Path("/tmp/panel.png")


@pytest.fixture
def script(asgi_live_server, celery_worker, fake_openai, fake_anthropic,
           monkeypatch):
    """Three models that answer slowly enough to watch, and a fourth registered under the
    default question model's slug (daphne was forked with the default settings).

    The models need no key: daphne was started before the fake servers put their random keys
    into the environment, so the server process could not see them.
    """
    script = PanelScript(
        clarify_replies=["Which **number base** do you mean?"],
        refined=["What is 2+2 in base ten?"],
        judge_replies={"gamma": ["I cannot decide.", "Still undecided."]},
    )
    for server in (fake_openai, fake_anthropic):
        server.reply_text = script
        server.token_delay = 0.25
        server.api_key = None
    for slug, server in (("alpha-7b", fake_openai), ("beta-3b", fake_openai),
                         ("gamma-1b", fake_anthropic)):
        make_model(server, slug, api_key_env="")
    make_model(fake_openai, "qwen2.5-coder-0.5b", api_key_env="")
    quiet_rating_runs(monkeypatch, script.rating_runs)
    yield script


@pytest.fixture
def page(chromium, script, asgi_live_server, monkeypatch) -> Iterator[object]:
    with browser_page(chromium, asgi_live_server, monkeypatch,
                      viewport={"width": 1280, "height": 900}) as page:
        yield page


def test_ask_clarify_watch_and_read_the_verdict(page, script, asgi_live_server, chromium):
    from playwright.sync_api import expect

    sockets, changed, progress_reads = [], [], []

    def on_socket(ws):
        sockets.append(ws.url)
        ws.on("framereceived", lambda frame: changed.append(frame) if '"changed"' in str(
            frame) else None)

    page.on("websocket", on_socket)
    page.on("request", lambda r: progress_reads.append(r.url) if r.url.endswith(
        "/progress") else None)
    page.goto("/panel/")
    expect(page.get_by_test_id("clarify")).to_be_checked()
    page.get_by_test_id("question-input").fill("What is 2+2?")
    for name in ("Alpha Model", "Beta Model", "Gamma Model"):
        page.get_by_label(name).check()
    page.get_by_test_id("ask").click()
    expect(page).to_have_url(PANEL_URL)
    panel = Panel.objects.get()
    assert panel.participants == ["alpha-7b", "beta-3b", "gamma-1b"]

    # Clarification: the model's question as Markdown, the person's answer, the socket
    # closed while the page waits for the person.
    round_1 = page.get_by_test_id("round-1")
    expect(round_1.locator(".markdown strong")).to_have_text("number base")
    expect(page.get_by_test_id("progress")).not_to_have_attribute("data-socket", PANEL_SOCKET)
    page.get_by_test_id("clarify-answer").fill("Base ten, please")
    page.get_by_test_id("clarify-send").click()
    expect(page.get_by_test_id("question")).to_have_text("What is 2+2 in base ten?")
    expect(page.get_by_test_id("round-2")).to_contain_text("found the question clear")

    # Answers, then judgements, arrive with progress.
    progress = page.get_by_test_id("progress")
    expect(progress).to_have_attribute("data-status", "judging")
    expect(page.get_by_test_id("answers-progress")).to_have_attribute("value", "3")
    expect(progress).to_have_attribute("data-status", "done")
    expect(progress).not_to_have_attribute("data-socket", PANEL_SOCKET)  # live part ended
    # Everything arrived through the panel's socket: the page read its progress only when
    # the socket opened or said something changed, never on a timer.
    assert any(PANEL_SOCKET.search(url) for url in sockets) and changed
    assert 0 < len(progress_reads) <= len(changed) + len(sockets)

    expect(page.get_by_test_id("winner")).to_contain_text("Alpha Model")
    rows = page.get_by_test_id("standing")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_have_attribute("data-model", "alpha-7b")
    expect(rows.nth(0).get_by_test_id("avg-rank")).to_have_text("1.00")
    expect(page.get_by_test_id("agreement")).to_contain_text("2 valid rankings, 1 discarded")
    judge = page.get_by_test_id("judge-gamma-1b")
    expect(judge.get_by_test_id("discard-reason")).to_contain_text(
        "Not a valid ranking after 2 attempts: the reply contains no JSON object")
    expect(page.get_by_test_id("judge-alpha-7b")).to_contain_text("Ranked itself 1 of 3")
    answer = page.get_by_test_id("answer-beta-3b")
    expect(answer.locator(".markdown strong")).to_have_text("four")
    expect(answer).not_to_contain_text("**")

    # The self-vote switch swaps the verdict in place.
    page.get_by_test_id("exclude-self").check()
    expect(page.get_by_test_id("verdict")).to_contain_text("scored only by the others")
    expect(rows.nth(1).get_by_test_id("avg-rank")).to_have_text("1.00")  # beta, by alpha only
    # The winner line follows the switch: without alpha's vote for itself, beta ties it.
    winner = page.get_by_test_id("winner")
    expect(winner).to_contain_text("Tied for first: Alpha Model and Beta Model")
    expect(winner).to_contain_text("self-votes excluded")
    page.get_by_test_id("exclude-self").uncheck()
    expect(winner).to_have_text(
        re.compile(r"^\s*Winner: Alpha Model\s+with an average rank of 1\.00\.\s*$"))
    page.get_by_test_id("exclude-self").check()
    expect(winner).to_contain_text("Tied for first")
    page.screenshot(path=str(SCREENSHOT), full_page=True)

    panel.refresh_from_db()
    assert panel.status == PanelStatus.DONE and panel.question == "What is 2+2 in base ten?"

    # The URL is shareable: another visitor sees the same verdict, without the clarify form.
    other = chromium.browser.new_context(base_url=asgi_live_server)
    try:
        shared = other.new_page()
        shared.goto(f"/panel/{panel.id}/")
        expect(shared.get_by_test_id("winner")).to_contain_text("Alpha Model")
        expect(shared.get_by_test_id("clarify-answer")).to_have_count(0)
        # It is not listed to them, though: a typed question is listed only to its asker.
        shared.goto("/panel/")
        expect(shared.get_by_text("No panels yet")).to_be_visible()
        expect(shared.locator("main")).not_to_contain_text("What is 2+2 in base ten?")
    finally:
        other.close()
    page.goto("/panel/")
    expect(page.get_by_test_id("panel-list")).to_contain_text("What is 2+2 in base ten?")
    expect(page.get_by_test_id("panel-list")).to_contain_text("just now")


def test_generate_a_question_and_run_it(page, script):
    from playwright.sync_api import expect

    page.goto("/panel/")
    page.get_by_test_id("generate").click()
    expect(page).to_have_url(PANEL_URL)
    expect(page.get_by_test_id("question")).to_have_text(script.generated)
    expect(page.get_by_test_id("progress")).to_have_attribute("data-status", "done")
    expect(page.get_by_test_id("progress")).to_contain_text("Question written by Qwen2.5 Model")
    panel = Panel.objects.get()
    assert panel.question_source == "generated" and len(panel.participants) == 4


def test_the_form_shows_every_error_the_server_sends(page, script):
    """An empty question (400) and a single chosen model (503) are said where the person
    acted, and what they typed stays."""
    from playwright.sync_api import expect

    page.goto("/panel/")
    page.get_by_test_id("question-input").fill("   ")
    page.get_by_test_id("ask").click()
    error = page.locator("#errors").get_by_test_id("error")
    expect(error).to_contain_text("empty")
    page.get_by_test_id("question-input").fill("Which is larger, 2^10 or 10^3?")
    page.get_by_label("Alpha Model").check()
    page.get_by_test_id("ask").click()
    expect(error).to_contain_text("at least two")
    expect(page.get_by_test_id("question-input")).to_have_value("Which is larger, 2^10 or 10^3?")
    expect(page).to_have_url(re.compile(r"/panel/$"))
    assert Panel.objects.count() == 0

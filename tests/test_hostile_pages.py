"""Model and user text that tries to hurt, through the pages that show it, in a real Chromium:
script tags, javascript: and data: links, event handlers, an image from another host, SVG,
CSS that covers the page, an endless word. Nothing executes (no dialog, no script), nothing
is fetched from another host, the Content-Security-Policy reports nothing it had to block,
and the layout holds (no sideways scrolling)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from arena.testing.browser import browser_page
from arena.testing.live import keyless

pytestmark = pytest.mark.browser

HOSTILE = "\n\n".join([
    "<script>alert('script')</script> **bold**",
    "[click](javascript:alert('link')) [data](data:text/html,<script>alert(1)</script>)",
    '<img src=x onerror="alert(\'img\')"> ![tracker](https://tracker.example/pixel.png)',
    "<svg onload=\"alert('svg')\"><circle r=5 /></svg>",
    '<style>body{display:none}</style> <div style="position:fixed;inset:0;z-index:99">x</div>',
    "| a | b |\n|---|---|\n| <b onclick=alert(1)>x</b> | y |",
    "W" * 3000,
])


@pytest.fixture
def hostile_site(asgi_live_server, celery_worker, two_models, fake_openai) -> str:
    fake_openai.reply_text = HOSTILE
    keyless(fake_openai, two_models)
    return asgi_live_server


@pytest.fixture
def watched(chromium, hostile_site, monkeypatch) -> Iterator[tuple[object, dict]]:
    """A phone-sized page that records dialogs, requests to other hosts and CSP reports."""
    with browser_page(chromium, hostile_site, monkeypatch,
                      viewport={"width": 390, "height": 844}) as page:
        seen: dict[str, list] = {"dialogs": [], "elsewhere": [], "csp": [], "errors": []}

        def only_this_server(route):
            if urlsplit(route.request.url).hostname == "127.0.0.1":
                route.continue_()
            else:
                seen["elsewhere"].append(route.request.url)
                route.abort("internetdisconnected")

        page.route("**/*", only_this_server)
        page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message),
                                          dialog.dismiss()))
        page.on("console", lambda msg: seen["csp"].append(msg.text)
                if "Content Security Policy" in msg.text else None)
        page.on("pageerror", lambda error: seen["errors"].append(str(error)))
        yield page, seen


def assert_unhurt(page, seen: dict) -> None:
    assert seen["dialogs"] == [], seen["dialogs"]
    assert seen["elsewhere"] == [], seen["elsewhere"]
    assert seen["csp"] == [], seen["csp"]
    assert seen["errors"] == [], seen["errors"]
    assert page.evaluate("document.querySelectorAll('.markdown script, .markdown svg, "
                         ".markdown img, .markdown iframe, .markdown style').length") == 0
    assert page.evaluate("document.body.style.display") != "none"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_hostile_answer_and_prompt_on_the_battle_page(watched):
    from playwright.sync_api import expect

    page, seen = watched
    page.goto("/battle/")
    page.get_by_test_id("prompt").fill("<script>alert('prompt')</script> Tell me <b>x</b>")
    page.get_by_test_id("submit").click()
    for position in ("left", "right"):
        side = page.locator(f"#turn-1 [data-testid=side-{position}]")
        expect(side).to_have_attribute("data-status", "done")
        expect(side.locator(".body.markdown")).to_contain_text("bold")
    expect(page.get_by_test_id("vote-left_better")).to_be_enabled()
    assert_unhurt(page, seen)
    page.screenshot(path="/tmp/hostile-battle.png", full_page=True)
    page.get_by_test_id("vote-tie").click()
    expect(page.locator("#reveal-slot")).to_contain_text("Alphamodel")
    assert_unhurt(page, seen)


def test_hostile_answers_on_the_panel_page(watched):
    from playwright.sync_api import expect

    page, seen = watched
    page.goto("/panel/")
    clarify = page.get_by_test_id("clarify")
    if clarify.is_enabled():
        clarify.uncheck()
    page.locator("#question").fill("<img src=x onerror=alert('q')> Which is best?")
    page.get_by_test_id("ask").click()
    # The judges cannot rank hostile text: the panel ends with or without a verdict.
    expect(page.get_by_test_id("progress")).to_have_attribute("data-status",
                                                              re.compile("done|failed"))
    expect(page.locator(".markdown").first).to_contain_text("bold")
    assert_unhurt(page, seen)
    page.screenshot(path="/tmp/hostile-panel.png", full_page=True)


HOSTILE_NAME = "<img src=x onerror=\"alert('name')\"><script>alert(1)</script>" + "M" * 120


def test_a_hostile_model_name_on_the_leaderboard_and_its_page(watched):
    """A models file is written by people too: a name with markup shows as text (and fits
    the name's 200 characters, which PostgreSQL enforces)."""
    from playwright.sync_api import expect

    from arena.models import AIModel
    from leaderboard.models import RunTrigger
    from leaderboard.services import ratings_run
    from leaderboard.tests.factories import make_votes

    make_votes([("hostile", "plain", "model_a", 30), ("plain", "hostile", "tie", 10)])
    AIModel.objects.filter(slug="hostile").update(name=HOSTILE_NAME,
                                                  organization="<b onclick=alert(2)>Org</b>")
    ratings_run(trigger=RunTrigger.COMMAND)
    page, seen = watched
    for path in ("/leaderboard/", "/models/hostile/"):
        page.goto(path)
        expect(page.locator("main")).to_contain_text("<script>alert(1)</script>")
        assert_unhurt(page, seen)
        assert page.evaluate("document.querySelectorAll('main script, main img').length") == 0
    page.screenshot(path="/tmp/hostile-model-page.png", full_page=True)

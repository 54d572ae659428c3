"""The battle page in a real Chromium, against daphne, a real Celery worker and fake providers.

Every wait is Playwright's auto-waiting (``expect``, ``wait_for_function``); nothing sleeps.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore

from arena.models import AIModel
from arena.testing.fake_providers import Behaviour, FakeOpenAIServer
from battles.models import MAX_MESSAGES, Battle, Position, Slot
from battles.tests.conftest import assert_blind, neutral_reply
from battles.tests.factories import answered_battle

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
TIMEOUT_MS = 30_000
BATTLE_URL = re.compile(r"/battle/[0-9a-f-]{36}/$")
SCREENSHOT = Path("/tmp/battle.png")

# True once some side of the turn shows streamed text while it is still being written;
# returns what the page showed at that moment (a side's text and the vote buttons' state).
CAUGHT_STREAMING = """turn => {
  for (const side of document.querySelectorAll(`#turn-${turn} .side`)) {
    const text = side.querySelector('.stream-text');
    const status = side.dataset.status;
    if (text && text.textContent.trim() && (status === 'streaming' || status === 'pending')) {
      const votes = [...document.querySelectorAll('#controls button.vote')];
      return {position: side.dataset.testid, status, text: text.textContent,
              votes: votes.length, votesDisabled: votes.every(b => b.disabled)};
    }
  }
  return false;
}"""


# -- Playwright -----------------------------------------------------------------------------------
#
# Playwright's sync API drives an asyncio loop in greenlets and, between its calls, leaves that
# loop marked as *running* in this thread. Django would then refuse the ORM here
# (SynchronousOnlyOperation) and pytest-asyncio could not run later async tests ("another loop
# is running"). So the loop is parked (unmarked) whenever no browser test runs, and a browser
# test allows Django's sync calls from this thread (pytest-django's documented setting).


class Chromium:
    def __init__(self, browser, loop) -> None:
        self.browser = browser
        self.loop = loop

    def wake(self) -> None:
        asyncio._set_running_loop(self.loop)

    def park(self) -> None:
        asyncio._set_running_loop(None)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    manager = sync_playwright()
    playwright = manager.start()
    try:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_ARGS)
    except BaseException:
        manager.__exit__()
        raise
    handle = Chromium(browser, asyncio.get_running_loop())
    handle.park()
    try:
        yield handle
    finally:
        handle.wake()
        browser.close()
        manager.__exit__()
        handle.park()


@pytest.fixture(scope="session")
def asgi_live_server_session(django_db_setup, django_db_blocker) -> Iterator[str]:
    """arena.testing.live's server, with database access allowed in the forked server.

    The fork copies pytest-django's database blocker as it is outside a test (blocked), so
    every request that touched the database failed with "Database access not allowed".
    """
    from daphne.testing import DaphneProcess
    from django.db import connections

    from arena.testing.live import _asgi_application

    with django_db_blocker.unblock():
        connections.close_all()
    process = DaphneProcess("127.0.0.1", partial(_asgi_application),
                            setup=django_db_blocker.unblock)
    process.start()
    if not process.ready.wait(timeout=30):
        process.terminate()
        raise RuntimeError("daphne did not start for the live server")
    try:
        yield f"http://127.0.0.1:{process.port.value}"
    finally:
        process.terminate()
        process.join(10)


@pytest.fixture
def arena(asgi_live_server, celery_worker, two_models, fake_openai) -> str:
    """The live site with two models that stream slowly enough to watch; its base URL.

    The models need no key: daphne was forked before this test's fake server put its random
    key into the environment, so the server process could not see it.
    """
    fake_openai.token_delay = 0.05
    fake_openai.api_key = None
    AIModel.objects.filter(slug__in=[m.slug for m in two_models]).update(api_key_env="")
    return asgi_live_server


def _open_page(chromium: Chromium, base_url: str, monkeypatch, **context_options):
    from playwright.sync_api import expect

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    chromium.wake()
    expect.set_options(timeout=TIMEOUT_MS)
    context = chromium.browser.new_context(base_url=base_url, **context_options)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return context, page, errors


def _close_page(chromium: Chromium, context, errors: list[str]) -> None:
    try:
        context.close()
    finally:
        chromium.park()
    assert errors == [], f"JavaScript errors on the page: {errors}"


@pytest.fixture
def page(chromium, arena, monkeypatch) -> Iterator[object]:
    context, page, errors = _open_page(chromium, arena, monkeypatch,
                                       viewport={"width": 1280, "height": 900})
    try:
        yield page
    finally:
        _close_page(chromium, context, errors)


@pytest.fixture
def phone(chromium, arena, monkeypatch) -> Iterator[object]:
    context, page, errors = _open_page(chromium, arena, monkeypatch,
                                       viewport={"width": 390, "height": 844},
                                       is_mobile=True, has_touch=True)
    try:
        yield page
    finally:
        _close_page(chromium, context, errors)


# -- helpers --------------------------------------------------------------------------------------

def side(page, turn: int, position: str):
    return page.locator(f"#turn-{turn} [data-testid=side-{position}]")


def start_battle(page, prompt: str) -> Battle:
    """Type a prompt on /battle/, submit, land on the battle's page; the battle."""
    from playwright.sync_api import expect

    page.goto("/battle/")
    page.get_by_test_id("prompt").fill(prompt)
    page.get_by_test_id("submit").click()
    expect(page).to_have_url(BATTLE_URL)
    battle_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    return Battle.objects.select_related("model_a", "model_b").get(pk=battle_id)


def wait_turn_done(page, turn: int) -> None:
    from playwright.sync_api import expect

    for position in (Position.LEFT, Position.RIGHT):
        expect(side(page, turn, position)).to_have_attribute("data-status", "done")


def catch_streaming(page, turn: int) -> dict:
    return page.wait_for_function(CAUGHT_STREAMING, arg=turn, polling="raf").json_value()


def owner_session(page, base_url: str) -> str:
    """A session for this browser, as the site would create it; its key."""
    store = SessionStore()
    store["visitor"] = True
    store.create()
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": store.session_key,
                               "url": base_url}])
    return store.session_key


def left_and_right(battle: Battle):
    left = battle.model_in(battle.slot_at(Position.LEFT))
    right = battle.model_in(battle.slot_at(Position.RIGHT))
    return left, right


# -- flows ----------------------------------------------------------------------------------------

def test_first_prompt_streams_both_sides_then_shows_markdown(page):
    from playwright.sync_api import expect

    battle = start_battle(page, "Tell me about **rivers** of Europe in a few short lines")

    seen = catch_streaming(page, 1)
    assert seen["votes"] == 4 and seen["votesDisabled"], seen
    expect(page.get_by_test_id("waiting")).to_be_visible()

    wait_turn_done(page, 1)
    for position, label in ((Position.LEFT, "Assistant A"), (Position.RIGHT, "Assistant B")):
        answer = side(page, 1, position)
        expect(answer.locator(".side-label")).to_have_text(label)
        # The finished side is the server's Markdown, not the raw streamed text.
        expect(answer.locator(".markdown strong")).to_have_text("rivers")
        expect(answer.locator(".stream-text")).to_have_count(0)
        expect(answer).not_to_contain_text("**")
    expect(page.get_by_test_id("counter")).to_have_text("1/6 messages")
    for button in page.locator("#controls button.vote").all():
        expect(button).to_be_enabled()
    expect(page.get_by_test_id("waiting")).to_have_count(0)
    expect(page.get_by_test_id("follow-up")).to_be_enabled()
    # What was on screen mid-stream was the start of an answer that was then saved.
    saved = [r.text for r in battle.turns.get().responses.all()]
    assert any(text.startswith(seen["text"]) for text in saved), (seen, saved)
    assert all(len(text) > len(seen["text"]) for text in saved)


def test_follow_up_adds_a_turn_and_each_model_sees_only_its_own_history(page, fake_openai):
    from playwright.sync_api import expect

    battle = start_battle(page, "First question about lakes?")
    wait_turn_done(page, 1)
    first_answers = {r.slot: r.text for r in battle.turns.get(index=1).responses.all()}

    page.get_by_test_id("follow-up").fill("Second question about mountains and their snow?")
    page.get_by_test_id("send-follow-up").click()
    expect(page.locator("#turn-2 .prompt-text")).to_have_text(
        "Second question about mountains and their snow?")
    seen = catch_streaming(page, 2)
    assert seen["votesDisabled"], seen
    wait_turn_done(page, 2)
    for position in (Position.LEFT, Position.RIGHT):
        expect(side(page, 2, position)).to_contain_text("mountains")
    expect(page.get_by_test_id("counter")).to_have_text("2/6 messages")
    expect(page.get_by_test_id("follow-up")).to_have_value("")
    expect(page.locator(".turn")).to_have_count(2)

    api_model_of = {Slot.A: battle.model_a.api_model, Slot.B: battle.model_b.api_model}
    second = [r for r in fake_openai.chat_requests if len(r.messages) > 2]
    assert sorted(r.model for r in second) == sorted(api_model_of.values())
    for request in second:
        slot = Slot.A if request.model == api_model_of[Slot.A] else Slot.B
        other = Slot.B if slot == Slot.A else Slot.A
        conversation = [m for m in request.messages if m["role"] != "system"]
        assert [m["role"] for m in conversation] == ["user", "assistant", "user"]
        assert conversation[1]["content"] == first_answers[slot]
        assert first_answers[other] not in str(request.messages)


def test_vote_reveals_the_models_and_nothing_names_them_before(page, fake_openai, two_models):
    from playwright.sync_api import expect

    battle = start_battle(page, "Which *colour* is the sky, and why?")
    wait_turn_done(page, 1)
    assert_blind(page.content(), fake_openai.base_url)

    page.get_by_role("button", name="Left is Better").click()
    reveal = page.get_by_test_id("reveal")
    expect(reveal).to_be_visible()
    left, right = left_and_right(battle)
    expect(page.get_by_test_id("revealed-left")).to_have_text(left.name)
    expect(page.get_by_test_id("revealed-right")).to_have_text(right.name)
    assert {left.name, right.name} == {m.name for m in two_models}
    expect(reveal).to_contain_text("Left is Better")
    expect(page.get_by_test_id("follow-up")).to_have_count(0)
    expect(page.locator("button.vote")).to_have_count(0)
    expect(page.get_by_test_id("new-battle-after")).to_be_visible()
    assert battle.vote.choice == "left_better"

    page.screenshot(path=str(SCREENSHOT), full_page=True)


def test_history_lists_the_battle_and_reopens_it(page):
    from playwright.sync_api import expect

    prompt = "What is the tallest waterfall on Earth?"
    battle = start_battle(page, prompt)
    wait_turn_done(page, 1)

    page.get_by_test_id("new-battle").click()
    expect(page).to_have_url(re.compile(r"/battle/$"))
    expect(page.get_by_test_id("prompt")).to_have_value("")
    entry = page.locator("#history a.history-item", has_text=prompt)
    expect(entry).to_have_count(1)
    expect(entry.locator(".history-title")).to_have_text(prompt)

    entry.click()
    expect(page).to_have_url(re.compile(rf"/battle/{battle.id}/$"))
    expect(page.locator("#turn-1 .prompt-text")).to_have_text(prompt)
    expect(side(page, 1, Position.LEFT)).to_have_attribute("data-status", "done")
    expect(page.locator("#history a.history-item.current")).to_contain_text(prompt)

    page.get_by_test_id("new-battle").click()
    expect(page).to_have_url(re.compile(r"/battle/$"))
    expect(page.get_by_test_id("prompt")).to_have_value("")
    expect(page.get_by_test_id("conversation")).to_have_count(0)


def test_a_failed_side_shows_the_error_and_retry_streams_a_new_answer(
    page, two_models, fast_llm_retries
):
    from playwright.sync_api import expect

    _, beta = two_models
    broken = FakeOpenAIServer(default=Behaviour.status(500), api_key=None,
                              reply_text=neutral_reply, token_delay=0.05).start()
    try:
        beta.base_url = broken.base_url
        beta.save()
        battle = start_battle(page, "Name three kinds of clouds")
        failed_at = battle.position_of(Slot.A if battle.model_a_id == beta.slug else Slot.B)
        kept_at = Position.RIGHT if failed_at == Position.LEFT else Position.LEFT
        failed = side(page, 1, failed_at)

        expect(failed).to_have_attribute("data-status", "failed")
        expect(failed.get_by_role("alert")).to_contain_text("This answer failed")
        expect(side(page, 1, kept_at)).to_have_attribute("data-status", "done")
        retry = page.get_by_test_id(f"retry-{failed_at}")
        expect(retry).to_be_visible()
        for button in page.locator("#controls button.vote").all():
            expect(button).to_be_disabled()
        assert len(broken.chat_requests) == 3  # the client's three attempts, then the error

        broken.default = Behaviour.ok()
        retry.click()
        expect(retry).to_have_count(0)
        seen = catch_streaming(page, 1)
        assert seen["position"] == f"side-{failed_at}", seen
        expect(failed).to_have_attribute("data-status", "done")
    finally:
        broken.stop()
    expect(failed.locator(".markdown")).to_contain_text("clouds")
    expect(page.get_by_role("alert")).to_have_count(0)
    for button in page.locator("#controls button.vote").all():
        expect(button).to_be_enabled()
    page.get_by_role("button", name="Tie").click()
    expect(page.get_by_test_id("reveal")).to_be_visible()


def test_the_follow_up_box_closes_after_six_messages(page, arena, two_models):
    from playwright.sync_api import expect

    alpha, beta = two_models
    key = owner_session(page, arena)
    battle = answered_battle(turns=MAX_MESSAGES - 1, session_key=key, model_a=alpha,
                             model_b=beta, title="prompt 1")
    page.goto(f"/battle/{battle.id}/")
    expect(page.get_by_test_id("counter")).to_have_text("5/6 messages")
    expect(page.get_by_test_id("follow-up")).to_be_enabled()

    page.get_by_test_id("follow-up").fill("The last question about deserts?")
    page.get_by_test_id("send-follow-up").click()
    wait_turn_done(page, MAX_MESSAGES)
    expect(page.get_by_test_id("counter")).to_have_text("6/6 messages")
    expect(page.get_by_test_id("follow-up")).to_be_disabled()
    expect(page.get_by_test_id("follow-up")).to_have_attribute(
        "placeholder", re.compile("Message limit reached"))
    expect(page.get_by_test_id("send-follow-up")).to_be_disabled()
    for button in page.locator("#controls button.vote").all():
        expect(button).to_be_enabled()
    assert battle.turns.count() == MAX_MESSAGES


def test_phone_width_stacks_the_sides_and_keeps_the_vote_buttons_visible(phone, two_models):
    from playwright.sync_api import expect

    battle = start_battle(phone, "Describe a small harbour town at dawn")
    wait_turn_done(phone, 1)
    left = side(phone, 1, Position.LEFT).bounding_box()
    right = side(phone, 1, Position.RIGHT).bounding_box()
    assert right["y"] >= left["y"] + left["height"], (left, right)  # one above the other
    assert abs(left["x"] - right["x"]) < 1 and left["width"] > 300, (left, right)
    for button in phone.locator("#controls button.vote").all():
        expect(button).to_be_visible()
        expect(button).to_be_in_viewport()
        expect(button).to_be_enabled()
    overflow = phone.evaluate("document.documentElement.scrollWidth")
    assert overflow <= 390, f"the page scrolls sideways ({overflow} px wide)"
    phone.get_by_role("button", name="Right is Better").click()
    expect(phone.get_by_test_id("revealed-right")).to_have_text(left_and_right(battle)[1].name)

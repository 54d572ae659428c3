"""The battle page in a real Chromium, against daphne, a real Celery worker and fake providers.

Every wait is Playwright's auto-waiting (``expect``, ``wait_for_function``); nothing sleeps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from arena.models import AIModel
from battles.models import MAX_MESSAGES, Battle, Position, Slot
from battles.tests.conftest import assert_blind, neutral_reply
from battles.tests.factories import answered_battle
from testkit.browser import browser_page
from testkit.fake_providers import Behaviour, FakeOpenAIServer
from testkit.visitors import visitor_session_key

pytestmark = pytest.mark.browser

BATTLE_URL = re.compile(r"/battle/[0-9a-f-]{36}/$")
SCREENSHOT = Path("/tmp/battle.png")

# True once a side of the turn (any, or the one at `position`) shows streamed text while it is
# still being written; then what the page showed at that moment: the side's text and whether
# every vote button was disabled.
CAUGHT_STREAMING = """([turn, position]) => {
  const selector = `#turn-${turn} .side` + (position ? `.side-${position}` : '');
  for (const side of document.querySelectorAll(selector)) {
    const text = side.querySelector('.stream-text');
    const status = side.dataset.status;
    if (text && text.textContent.trim() && (status === 'running' || status === 'pending')) {
      const votes = [...document.querySelectorAll('#controls button.vote')];
      return {position: side.dataset.testid, status, text: text.textContent,
              votes: votes.length, votesDisabled: votes.every(b => b.disabled)};
    }
  }
  return false;
}"""


@pytest.fixture
def phone(chromium, arena, monkeypatch) -> Iterator[object]:
    with browser_page(chromium, arena, monkeypatch, viewport={"width": 390, "height": 844},
                      is_mobile=True, has_touch=True) as page:
        yield page


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
    """Both answers of the turn rendered by the server, and the controls caught up."""
    from playwright.sync_api import expect

    for position in (Position.LEFT, Position.RIGHT):
        expect(side(page, turn, position)).to_have_attribute("data-status", "done")
        expect(side(page, turn, position).locator(".body.markdown")).to_have_count(1)
    expect(page.get_by_test_id("vote-left_better")).to_be_enabled()


def catch_streaming(page, turn: int, position: str | None = None) -> dict:
    """Wait for a moment when a side shows text while it is still being written."""
    caught = page.wait_for_function(CAUGHT_STREAMING, arg=[turn, position], polling="raf")
    return caught.json_value()


def owner_session(page, base_url: str) -> str:
    """A session for this browser, as the site would create it; its key."""
    key = visitor_session_key()
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": key,
                               "url": base_url}])
    return key


def left_and_right(battle: Battle):
    left = battle.model_in(battle.slot_at(Position.LEFT))
    right = battle.model_in(battle.slot_at(Position.RIGHT))
    return left, right


# -- flows ----------------------------------------------------------------------------------------

def test_first_prompt_streams_both_sides_then_shows_markdown(page):
    from playwright.sync_api import expect

    battle = start_battle(page, "Tell me about **rivers** of Europe in a few short lines")

    seen = {position: catch_streaming(page, 1, position)
            for position in (Position.LEFT, Position.RIGHT)}
    for moment in seen.values():
        assert moment["votes"] == 4 and moment["votesDisabled"], moment

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
    # What was on screen mid-stream was the start of the answer that was then saved, already
    # rendered as Markdown (no raw ** on screen).
    for position, moment in seen.items():
        saved = battle.turns.get().responses.get(slot=battle.slot_at(position)).text
        shown = moment["text"].strip()
        assert "**" not in shown, moment
        assert saved.replace("**", "").startswith(shown) and len(saved) > len(shown), moment


def test_follow_up_adds_a_turn_and_each_model_sees_only_its_own_history(page, fake_openai):
    from playwright.sync_api import expect

    battle = start_battle(page, "First question about lakes?")
    wait_turn_done(page, 1)
    first_answers = {r.slot: r.text for r in battle.turns.get(index=1).responses.all()}

    page.get_by_test_id("follow-up").fill("Second question about mountains and their snow?")
    page.get_by_test_id("send-follow-up").click()
    expect(page.locator("#turn-2 .prompt-text")).to_have_text(
        "Second question about mountains and their snow?")
    for position in (Position.LEFT, Position.RIGHT):
        assert catch_streaming(page, 2, position)["votesDisabled"]
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
    # The sidebar marks the battle voted at once, without a reload.
    expect(page.locator("#history .thread-battle.current .badge")).to_have_text("voted")
    expect(page.get_by_test_id("vote-line")).to_contain_text("Your vote")

    page.screenshot(path=str(SCREENSHOT), full_page=True)

    # Another visitor opening the shared link reads "The vote", not "Your vote".
    other = page.context.browser.new_context(base_url=page.url.split("/battle/")[0])
    try:
        shared = other.new_page()
        shared.goto(f"/battle/{battle.id}/")
        expect(shared.get_by_test_id("vote-line")).to_contain_text("The vote: Left is Better")
        expect(shared.get_by_test_id("vote-line")).not_to_contain_text("Your vote")
    finally:
        other.close()


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
        # Not a dead end: "Both are bad" stays open, and a new battle is one click away.
        for value in ("left_better", "tie", "right_better"):
            expect(page.get_by_test_id(f"vote-{value}")).to_be_disabled()
        expect(page.get_by_test_id("vote-both_bad")).to_be_enabled()
        expect(page.get_by_test_id("failed-next")).to_contain_text("Retry that side")
        expect(page.get_by_test_id("new-battle-failed")).to_have_attribute("href", "/battle/")
        assert len(broken.chat_requests) == 3  # the client's three attempts, then the error

        broken.default = Behaviour.ok()
        retry.click()
        expect(retry).to_have_count(0)
        assert catch_streaming(page, 1, failed_at)["votesDisabled"]
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


def _unbroken_string_keeps_the_layout(page, width: int) -> None:
    from playwright.sync_api import expect

    start_battle(page, "x" * 3000)
    wait_turn_done(page, 1)
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page scrolls sideways ({scroll_width} px wide)"
    for button in page.locator("#controls button.vote").all():
        expect(button).to_be_in_viewport()
    page.screenshot(path=f"/tmp/unbroken-{width}.png")


def test_an_unbroken_string_wraps_at_desktop_width(page):
    _unbroken_string_keeps_the_layout(page, 1280)


def test_an_unbroken_string_wraps_at_phone_width(phone):
    _unbroken_string_keeps_the_layout(phone, 390)


def test_a_prompt_over_the_models_window_is_refused_in_words_and_kept(page, two_models):
    """The page knows what the models read: the counter says how far over their limit the
    prompt is and the button waits, instead of the server refusing it after the send (the
    counter said 30,000 characters while the models refused anything over about 11,500)."""
    from playwright.sync_api import expect

    from arena.selectors import prompt_char_limit

    AIModel.objects.filter(pk__in=[m.pk for m in two_models]).update(context_tokens=4096)
    prompt = "word " * 4000
    page.goto("/battle/")
    limit = prompt_char_limit()
    assert limit < 20_000
    page.get_by_test_id("prompt").fill(prompt)
    expect(page.get_by_test_id("prompt-count")).to_contain_text(
        f"over the limit of {limit:,}")
    expect(page.get_by_test_id("submit")).to_be_disabled()
    expect(page.get_by_test_id("prompt")).to_have_value(prompt)
    assert not Battle.objects.exists()


def test_the_prompt_box_counts_and_never_cuts_a_paste(page):
    from playwright.sync_api import expect

    page.goto("/battle/")
    box = page.get_by_test_id("prompt")
    count = page.get_by_test_id("prompt-count")
    box.fill("Hello there")
    expect(count).to_have_text("11 / 30,000 characters")
    pasted = "y" * 30_050
    box.fill(pasted)
    assert len(box.input_value()) == 30_050  # nothing cut
    expect(count).to_contain_text("50 characters over the limit of 30,000")
    expect(page.get_by_test_id("submit")).to_be_disabled()
    box.fill("y" * 30_000)
    expect(count).to_have_text("30,000 / 30,000 characters")
    expect(page.get_by_test_id("submit")).to_be_enabled()


def test_keyboard_enter_sends_shift_enter_adds_a_line_and_keys_vote(page, two_models):
    from playwright.sync_api import expect

    page.goto("/battle/")
    box = page.get_by_test_id("prompt")
    box.click()
    box.type("Name two rivers")
    box.press("Shift+Enter")
    box.type("in Europe")
    expect(box).to_have_value("Name two rivers\nin Europe")
    box.press("Enter")
    expect(page).to_have_url(BATTLE_URL)
    battle = Battle.objects.get()
    assert battle.turns.get().prompt == "Name two rivers\nin Europe"
    wait_turn_done(page, 1)
    for key, value in (("1", "left_better"), ("2", "tie"), ("3", "both_bad"),
                       ("4", "right_better")):
        expect(page.get_by_test_id(f"vote-{value}").locator("kbd")).to_have_text(key)
    page.locator("body").press("4")
    expect(page.get_by_test_id("revealed-right")).to_have_text(left_and_right(battle)[1].name)
    assert battle.vote.choice == "right_better"
    expect(page.get_by_test_id("next-prompt")).to_be_focused()  # the way forward


def test_the_phone_menu_opens_from_the_keyboard(phone, two_models):
    from playwright.sync_api import expect

    phone.goto("/")
    menu_link = phone.locator(".nav a", has_text="Leaderboard")
    expect(menu_link).to_be_hidden()
    phone.locator(".brand").focus()
    phone.keyboard.press("Tab")
    expect(phone.locator("#nav-toggle")).to_be_focused()
    phone.keyboard.press("Space")
    expect(menu_link).to_be_visible()


def test_both_answers_together_hides_who_finished_first(page, two_models):
    from playwright.sync_api import expect

    _, beta = two_models
    slow = FakeOpenAIServer(api_key=None, reply_text=neutral_reply, token_delay=0.4).start()
    try:
        beta.base_url = slow.base_url
        beta.save()
        page.goto("/battle/")
        page.get_by_test_id("hold-answers").check()
        battle = start_battle(page, "Name three kinds of clouds")
        fast_at = battle.position_of(Slot.A if battle.model_a_id != beta.slug else Slot.B)
        slow_at = Position.RIGHT if fast_at == Position.LEFT else Position.LEFT
        expect(side(page, 1, fast_at)).to_have_attribute("data-status", "done")
        expect(side(page, 1, slow_at)).not_to_have_attribute("data-status", "done")
        expect(side(page, 1, fast_at).locator(".body")).not_to_be_visible()
        expect(page.get_by_test_id("hold-answers")).to_be_checked()  # kept across pages
        wait_turn_done(page, 1)
        for position in (Position.LEFT, Position.RIGHT):
            expect(side(page, 1, position).locator(".body")).to_be_visible()
    finally:
        slow.stop()


CODE_REPLY = ("Here is **the fix**:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
              "That is all.")
LIVE_CODE = """() => {
  for (const side of document.querySelectorAll('.side')) {
    const live = side.querySelector('.stream-text');
    if (live && ['running', 'pending'].includes(side.dataset.status)
        && live.querySelector('strong') && live.querySelector('pre code.hljs')
        && live.querySelector('pre > button.copy')) {
      return {html: live.innerHTML, text: live.textContent};
    }
  }
  return false;
}"""


def test_markdown_renders_while_streaming_with_highlighted_code_and_copy_buttons(
        page, fake_openai):
    from playwright.sync_api import expect

    fake_openai.reply_text = lambda rec: CODE_REPLY
    fake_openai.token_delay = 0.08  # the closing words arrive well after the code block
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    start_battle(page, "How do I add two numbers in Python?")
    live = page.wait_for_function(LIVE_CODE, polling="raf").json_value()
    assert "**" not in live["text"] and "```" not in live["text"], live
    assert "<script" not in live["html"]
    wait_turn_done(page, 1)
    answer = side(page, 1, Position.LEFT)
    expect(answer.locator("pre code.hljs .hljs-keyword").first).to_have_text("def")
    answer.get_by_test_id("copy-code").click()
    expect(answer.get_by_test_id("copy-code")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "def add(a, b):\n    return a + b\n"
    answer.get_by_test_id("copy-answer").click()
    assert page.evaluate("navigator.clipboard.readText()") == CODE_REPLY
    # The worker kept each answer's style for style control: one bold span, nothing else
    # (the code block's lines are code).
    from battles.models import Response

    saved = Response.objects.filter(turn__battle__title__startswith="How do I add")
    assert {(r.md_headers, r.md_lists, r.md_bold) for r in saved} == {(0, 0, 1)}
    page.screenshot(path="/tmp/battle-code.png", full_page=True)


def test_an_answer_cut_at_its_token_cap_says_so(page, two_models):
    from playwright.sync_api import expect

    AIModel.objects.filter(pk=two_models[0].pk).update(max_tokens=3)
    battle = start_battle(page, "Describe the sea in many words")
    wait_turn_done(page, 1)
    cut_at = battle.position_of(Slot.A if battle.model_a_id == two_models[0].pk else Slot.B)
    whole_at = Position.RIGHT if cut_at == Position.LEFT else Position.LEFT
    # Before the vote without the figure: a model's cap would name it.
    expect(page.get_by_test_id(f"cut-{cut_at}")).to_have_text(
        "Stopped at the length limit: the rest was not written.")
    expect(page.get_by_test_id(f"cut-{whole_at}")).to_have_count(0)


def test_stop_ends_both_streams_and_keeps_what_was_written(page, fake_openai, two_models):
    from playwright.sync_api import expect

    fake_openai.reply_text = lambda rec: " ".join(f"word{i}" for i in range(300))
    fake_openai.token_delay = 0.05
    AIModel.objects.filter(pk__in=[m.pk for m in two_models]).update(max_tokens=400)
    battle = start_battle(page, "Count for me, slowly")
    shown = {position: catch_streaming(page, 1, position)["text"].strip()
             for position in (Position.LEFT, Position.RIGHT)}
    stop = page.get_by_test_id("stop")
    expect(stop).to_contain_text("Esc")
    stop.click()

    for position in (Position.LEFT, Position.RIGHT):
        expect(side(page, 1, position)).to_have_attribute("data-status", "done")
        expect(page.get_by_test_id(f"stopped-{position}")).to_have_text(
            "Stopped before the end: the rest was not written.")
        kept = side(page, 1, position).locator(".body.markdown").inner_text().strip()
        assert kept.startswith(shown[position]) and "word299" not in kept, (shown, kept)
    expect(page.get_by_test_id("stop")).to_have_count(0)
    expect(page.get_by_test_id("vote-left_better")).to_be_enabled()
    assert all(r.stopped for r in Battle.objects.get(pk=battle.pk).turns.get().responses.all())
    page.screenshot(path="/tmp/battle-stopped.png", full_page=True)
    page.keyboard.press("1")
    expect(page.get_by_test_id("reveal")).to_be_visible()


def test_escape_stops_the_answers(page, fake_openai, two_models):
    from playwright.sync_api import expect

    fake_openai.reply_text = lambda rec: " ".join(f"word{i}" for i in range(300))
    fake_openai.token_delay = 0.05
    AIModel.objects.filter(pk__in=[m.pk for m in two_models]).update(max_tokens=400)
    start_battle(page, "Count for me, slowly")
    catch_streaming(page, 1)
    page.keyboard.press("Escape")
    for position in (Position.LEFT, Position.RIGHT):
        expect(page.get_by_test_id(f"stopped-{position}")).to_be_visible()


def test_a_session_is_a_thread_of_battles_each_voted_on_its_own(page, two_models, fake_openai):
    from playwright.sync_api import expect

    first = start_battle(page, "Name a river in Spain")
    wait_turn_done(page, 1)
    page.keyboard.press("1")
    expect(page.get_by_test_id("reveal")).to_be_visible()
    sessions = page.locator("#history [data-testid=session]")
    expect(sessions).to_have_count(1)
    expect(sessions.locator(".history-meta")).to_contain_text("1 battle · just now")

    # After the vote, the next prompt starts a new blind battle in the same session.
    next_prompt = page.get_by_test_id("next-prompt")
    expect(next_prompt).to_be_focused()
    next_prompt.fill("Name a lake in Italy")
    next_prompt.press("Enter")
    expect(page).not_to_have_url(re.compile(rf"/battle/{first.id}/$"))
    expect(page).to_have_url(BATTLE_URL)
    second = Battle.objects.get(title="Name a lake in Italy")
    assert second.thread_id == first.thread_id
    expect(page.get_by_test_id("reveal")).to_have_count(0)
    expect(page.locator("button.vote")).to_have_count(4)
    assert_blind(page.content(), fake_openai.base_url)
    wait_turn_done(page, 1)
    expect(page.locator("#turn-1 .prompt-text")).to_have_text("Name a lake in Italy")

    # One session in the sidebar, titled by its first prompt, holding both battles in order.
    expect(sessions).to_have_count(1)
    expect(sessions.locator(".history-title")).to_have_text("Name a river in Spain")
    expect(sessions.locator(".history-meta")).to_contain_text("2 battles")
    battles = page.locator("#history [data-testid=thread-battle]")
    expect(battles).to_have_text([re.compile(r"1\. Name a river in Spain\s+voted"),
                                  re.compile(r"2\. Name a lake in Italy\s*$")])
    expect(battles.nth(1)).to_have_class(re.compile("current"))
    expect(battles.nth(1).locator(".badge")).to_have_count(0)
    expect(page.get_by_test_id("thread-nav")).to_contain_text("Battle 1 · Battle 2 of this session")

    # The second battle is voted on its own; the sidebar follows without a reload.
    page.keyboard.press("4")
    expect(page.get_by_test_id("reveal")).to_be_visible()
    expect(battles.nth(1).locator(".badge")).to_have_text("voted")
    assert second.vote.choice == "right_better" and first.vote.choice == "left_better"
    page.screenshot(path="/tmp/battle-session.png", full_page=True)

    # Going back to the first battle shows it, revealed, inside the same session.
    battles.nth(0).click()
    expect(page).to_have_url(re.compile(rf"/battle/{first.id}/$"))
    expect(page.get_by_test_id("reveal")).to_be_visible()
    # Another tab of the same visitor sees a new session appear without a reload.
    other = page.context.new_page()
    other.goto("/battle/")
    expect(other.locator("#history [data-testid=session]")).to_have_count(1)
    page.goto("/battle/")
    page.get_by_test_id("prompt").fill("A new topic entirely")
    page.get_by_test_id("submit").click()
    expect(page).to_have_url(BATTLE_URL)
    expect(other.locator("#history [data-testid=session]")).to_have_count(2)
    expect(other.locator("#history [data-testid=session]").first).to_contain_text(
        "A new topic entirely")
    wait_turn_done(page, 1)

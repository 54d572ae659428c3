"""Regenerate and share in a real Chromium, against daphne, a real Celery worker and the fake
provider: press Regenerate, watch the new answers stream, vote, share, open the public link in
a fresh browser (no cookies), see the card. Screenshots go to /tmp/shots-share/.

Every wait is Playwright's auto-waiting; nothing sleeps.
"""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path

import pytest
from PIL import Image

from battles.models import Response, Share, SupersededAnswer
from battles.tests.test_browser import (
    catch_streaming,
    left_and_right,
    side,
    start_battle,
    wait_turn_done,
)

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots-share")
PHONE = {"width": 390, "height": 844}
CARD_LOADED = """el => el.complete && el.naturalWidth > 0"""


def answers(battle) -> dict[str, str]:
    """The answers of the battle's first message as the database holds them, by position."""
    return {battle.position_of(r.slot): r.text
            for r in Response.objects.filter(turn__battle=battle, turn__index=1)}


def shot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_regenerate_streams_new_answers_then_vote_share_and_open_the_public_link(
        page, arena, fake_openai):
    from playwright.sync_api import expect

    takes = itertools.count(1)
    fake_openai.reply_text = (
        lambda rec: f"Take {next(takes)}: rivers such as the Danube and the Rhine, in words.")
    battle = start_battle(page, "Name two rivers of Europe")
    wait_turn_done(page, 1)
    first = answers(battle)
    expect(page.get_by_test_id("share")).to_have_count(0)  # never before the vote

    page.get_by_test_id("regenerate").click()
    streaming = catch_streaming(page, 1)
    assert streaming["votesDisabled"], streaming
    assert streaming["text"].strip() not in first.values()
    wait_turn_done(page, 1)
    expect(page.get_by_test_id("regenerated-1")).to_be_visible()
    expect(page.locator(".turn")).to_have_count(1)
    shown = answers(battle)
    kept = set(SupersededAnswer.objects.filter(turn__battle=battle)
               .values_list("text", flat=True))
    assert set(first.values()) == kept
    assert set(shown.values()).isdisjoint(first.values())
    for position, text in shown.items():
        expect(side(page, 1, position)).to_contain_text(text)
    for text in first.values():
        expect(page.get_by_test_id("conversation")).not_to_contain_text(text)
    shot(page, "battle-regenerated-desktop")
    page.set_viewport_size(PHONE)
    shot(page, "battle-regenerated-phone")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.get_by_test_id("vote-left_better").click()
    left, right = left_and_right(battle)
    expect(page.get_by_test_id("revealed-left")).to_have_text(left.name)
    page.get_by_test_id("share").click()
    url_box = page.get_by_test_id("share-url")
    expect(url_box).to_have_value(re.compile(rf"^{re.escape(arena)}/battle/shared/[\w-]{{22}}/$"))
    url = url_box.input_value()
    assert url == f"{arena}/battle/shared/{Share.objects.get(battle=battle).token}/"
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=arena)
    page.get_by_test_id("share-copy").click()
    expect(page.get_by_test_id("share-copy")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == url
    page.wait_for_function(CARD_LOADED, arg=page.get_by_test_id("share-card").element_handle())
    shot(page, "battle-shared-desktop")
    page.get_by_test_id("share-card").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "battle-shared-desktop-viewport.png"))
    page.set_viewport_size(PHONE)
    shot(page, "battle-shared-phone")

    browser = page.context.browser
    for name, viewport in (("desktop", {"width": 1280, "height": 900}), ("phone", PHONE)):
        fresh = browser.new_context(viewport=viewport)  # nobody's session: a stranger
        try:
            errors: list[str] = []
            public = fresh.new_page()
            public.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
            public.goto(url)
            expect(public.get_by_test_id("revealed-left")).to_have_text(left.name)
            expect(public.get_by_test_id("revealed-right")).to_have_text(right.name)
            expect(public.get_by_test_id("vote-line")).to_contain_text("Left is Better")
            for position, text in shown.items():
                expect(public.get_by_test_id(f"shared-{position}-1")).to_contain_text(text)
            card = public.locator('meta[property="og:image"]').get_attribute("content")
            assert card == url + "card.png"
            assert public.locator('meta[name="twitter:image"]').get_attribute("content") == card
            expect(public.locator("button")).to_have_count(1)  # the theme switch alone
            shot(public, f"shared-page-{name}")
            if name == "desktop":
                public.set_viewport_size({"width": 1200, "height": 630})
                image = public.goto(card)
                assert image.status == 200
                assert image.headers["content-type"] == "image/png"
                png = Image.open(io.BytesIO(image.body()))
                assert (png.format, png.size) == ("PNG", (1200, 630))
                (SHOTS / "shared-card.png").write_bytes(image.body())
            assert errors == []
        finally:
            fresh.close()

    page.get_by_test_id("share-revoke").click()
    expect(page.get_by_test_id("share")).to_be_visible()
    gone = page.context.browser.new_context()
    try:
        assert gone.new_page().goto(url).status == 404
        # Asked of the site itself: a browser may keep the card a while (CARD_MAX_AGE).
        assert gone.request.get(card).status == 404
    finally:
        gone.close()

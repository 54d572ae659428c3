"""A battle page that hears nothing of an unfinished answer for a while says so (here no
worker runs to take it), and keeps waiting for it."""

from __future__ import annotations

import pytest
from django.conf import settings

from arena.steps import StepStatus
from battles.tests.factories import BattleFactory, ResponseFactory, TurnFactory
from testkit.browser import browser_page
from testkit.visitors import visitor_session_key

pytestmark = pytest.mark.browser


def test_a_silent_answer_gets_a_word_and_the_page_keeps_listening(chromium, asgi_live_server,
                                                                  monkeypatch):
    from playwright.sync_api import expect

    key = visitor_session_key()
    battle = BattleFactory(session_key=key)
    turn = TurnFactory(battle=battle)
    for slot in ("a", "b"):
        ResponseFactory(turn=turn, slot=slot, status=StepStatus.PENDING, text="")
    with browser_page(chromium, asgi_live_server, monkeypatch) as page:
        page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": key,
                                   "url": asgi_live_server}])
        page.goto(f"/battle/{battle.id}/")
        notice = page.get_by_test_id("step-notice-left")
        expect(notice).to_have_text("")
        # The page's patience, shortened here (20 s by default: ARENA_QUIET_NOTICE_SECONDS).
        page.evaluate("document.getElementById('conversation').dataset.quietMs = '200'")
        expect(notice).to_contain_text("No word from the workers for a while")
        expect(notice).to_contain_text("kept")
        expect(page.get_by_test_id("step-notice-right")).to_contain_text("No word")
        expect(page.locator("#turn-1 .side-left .spinner")).to_be_visible()

"""The profile page in a real Chromium at 1280 and 390 px: a person signs in, sees their own
leaderboard and contests, makes a token (shown once) and revokes it, downloads their data.
Screenshots in /work/notes/screens/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from accounts.services import profile_of
from accounts.tests.me_support import models, something_in_every_mode, voted_battle
from accounts.tests.support import PASSWORD, person
from leaderboard.runs.services import board_recompute
from testkit.browser import assert_unhurt, browser_page, watch_page

pytestmark = pytest.mark.browser
SHOTS = Path("/work/notes/screens")


@pytest.fixture
def voter(transactional_db):
    user = person()
    key = profile_of(user).visitor_key
    something_in_every_mode(key)
    a, b, c = models()
    for choice in ("left_better", "left_better", "tie", "right_better"):
        voted_battle(key, a, b, choice)
    voted_battle(key, b, c, "left_better")
    for _ in range(5):  # everyone else's votes, and the public board rated
        voted_battle("someone-else", b, a, "left_better")
    board_recompute(board_name="text")
    return user


@pytest.mark.parametrize("width", [1280, 390])
def test_a_person_reads_their_profile_makes_a_token_and_exports(voter, chromium,
                                                                asgi_live_server, monkeypatch,
                                                                width):
    from playwright.sync_api import expect

    SHOTS.mkdir(exist_ok=True)
    with browser_page(chromium, asgi_live_server, monkeypatch, color_scheme="light",
                      accept_downloads=True,
                      viewport={"width": width, "height": 900}) as page:
        seen = watch_page(page)
        page.goto("/me/")
        expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/me/$"))
        page.fill("input[name=login]", "ada@example.com")
        page.fill("input[name=password]", PASSWORD)
        page.locator("form button[type=submit], form input[type=submit]").last.click()
        expect(page).to_have_url(re.compile(r"/me/$"))
        expect(page.get_by_test_id("me-account")).to_contain_text("ada@example.com")
        expect(page.get_by_test_id("me-board-row")).to_have_count(5)  # 3 here, 2 in every_mode
        expect(page.get_by_test_id("me-board-row").filter(has_text="#1")).to_have_count(2)
        expect(page.get_by_test_id("me-battles").locator("li")).to_have_count(7)
        expect(page.get_by_test_id("me-points")).to_have_text("950")
        expect(page.get_by_test_id("me-voice").locator("li")).to_have_count(1)
        page.screenshot(path=str(SHOTS / f"me-{width}.png"), full_page=True)
        assert_unhurt(page, seen, width=width)

        page.fill("#token-name", "my notebook")
        page.get_by_role("button", name="Create token").click()
        token = page.get_by_test_id("new-token").locator("code")
        expect(token).to_have_text(re.compile(r"^arena_\S{20,}$"))
        expect(page.get_by_test_id("token-row")).to_have_count(1)
        page.get_by_test_id("me-tokens").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"me-token-{width}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.goto("/me/")
        expect(page.get_by_test_id("new-token")).to_have_count(0)  # shown once
        page.get_by_role("button", name="Revoke").click()
        expect(page.get_by_test_id("token-row")).to_contain_text("revoked")

        with page.expect_download() as download:
            page.get_by_test_id("export").click()
        saved = Path(download.value.path())
        data = json.loads(saved.read_text())
        assert data["account"]["email"] == "ada@example.com"
        assert len(data["votes"]["text"]) == 6
        assert download.value.suggested_filename.startswith("arena-export-")

        page.goto("/privacy/")
        expect(page.get_by_test_id("privacy")).to_contain_text("Delete it")
        page.screenshot(path=str(SHOTS / f"privacy-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width

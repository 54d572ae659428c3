"""In a real Chromium: the "may be published" box on the battle page (unticked until the
voter ticks it, and then stored with the vote), /data/'s downloads, and the debate's box.
Screenshots of each page at 1280 and 390 px go to /tmp/shots-data37/."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from battles.models import Vote
from battles.tests.factories import vote_on
from leaderboard.models import RunTrigger
from leaderboard.runs.services import ratings_run
from releases.services import release_build
from testkit.browser import browser_page, shots_at_each_width
from testkit.live import wait_until_worker_settled
from testkit.visitors import visitor_session_key

from .support import SECRET_PROMPT, finished_debate, text_battle

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots-data37")


@pytest.fixture(autouse=True)
def served_releases(settings) -> Iterator[Path]:
    """The folder the live server (its own process, with the default settings) serves
    releases from: this test's releases are written there, and removed after it."""
    settings.ARENA_RELEASES_DIR = Path(settings.VAR_DIR) / "media" / "releases"
    yield settings.ARENA_RELEASES_DIR
    shutil.rmtree(settings.ARENA_RELEASES_DIR, ignore_errors=True)


@pytest.fixture
def page(chromium, asgi_live_server, monkeypatch) -> Iterator[object]:
    with browser_page(chromium, asgi_live_server, monkeypatch,
                      viewport={"width": 1280, "height": 900}, accept_downloads=True) as page:
        page.base = asgi_live_server
        yield page


def shoot(page, name: str) -> None:
    """The page at each width, whole."""
    list(shots_at_each_width(page, SHOTS, name))


def owner(page) -> str:
    key = visitor_session_key()
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": key,
                               "url": page.base}])
    return key


def test_the_battle_vote_carries_the_ticked_box(page):
    from playwright.sync_api import expect

    battle = text_battle(owner(page), prompt=SECRET_PROMPT)
    page.goto(f"/battle/{battle.pk}/")
    box = page.get_by_test_id("publish-text")
    expect(box).not_to_be_checked()
    expect(page.get_by_text("My prompts and answers may be published")).to_be_visible()
    shoot(page, "battle-vote")
    box.check()
    page.get_by_test_id("vote-left_better").click()
    expect(page.locator("#reveal-slot")).not_to_be_empty()
    assert Vote.objects.get(battle=battle).publish_text is True


def test_a_vote_without_the_box_is_not_published(page):
    from playwright.sync_api import expect

    battle = text_battle(owner(page))
    page.goto(f"/battle/{battle.pk}/")
    page.get_by_test_id("vote-tie").click()
    expect(page.locator("#reveal-slot")).not_to_be_empty()
    assert Vote.objects.get(battle=battle).publish_text is False


def test_data_lists_the_release_and_its_files_download_whole(page):
    from playwright.sync_api import expect

    key = visitor_session_key()
    vote_on(text_battle(key, prompt=SECRET_PROMPT), choice="left_better", publish_text=True)
    vote_on(text_battle(key), choice="tie")
    # The votes' own rating run (debounced, in the session's worker) done first: the board's
    # latest run is then this one, which the release cut after it covers.
    wait_until_worker_settled()
    ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    release, _ = release_build()
    page.goto("/data/")
    expect(page.get_by_test_id("release")).to_have_count(1)
    expect(page.get_by_test_id("release-summary")).to_contain_text("2 votes")
    page.get_by_test_id("datasheet").locator("summary").click()
    expect(page.get_by_test_id("datasheet")).to_contain_text("What was left out, and why")
    shoot(page, "data")
    for name in ("votes.csv", "votes.parquet"):
        with page.expect_download() as caught:
            page.get_by_test_id(f"download-{name}").click()
        download = caught.value
        assert download.suggested_filename == f"arena-{release.date.isoformat()}-{name}"
        assert download.failure() is None, (name, download.failure())
        data = Path(download.path()).read_bytes()
        assert hashlib.sha256(data).hexdigest() == release.file(name)["sha256"]
    page.goto("/leaderboard/?board=text")
    link = page.get_by_test_id("release-link")
    expect(link).to_contain_text(release.date.isoformat())
    shoot(page, "leaderboard")
    link.click()
    expect(page).to_have_url(f"{page.base}/data/#release-{release.date.isoformat()}")


def test_the_debate_vote_form_offers_the_box_unticked(page):
    from playwright.sync_api import expect

    debate = finished_debate()
    page.goto(f"/debates/{debate.pk}/")
    box = page.get_by_test_id("publish-text")
    expect(box).to_be_visible()
    expect(box).not_to_be_checked()
    shoot(page, "debate-vote")


def test_the_voice_vote_form_offers_the_box_unticked(page):
    from playwright.sync_api import expect

    from agents.tests.voice_support import echo_agents

    echo_agents()
    page.goto("/voice/")
    # The form shows once both calls are over; shown here as that state shows it.
    page.evaluate("document.querySelector('form.vote').hidden = false")
    box = page.get_by_test_id("publish-text")
    expect(box).to_be_visible()
    expect(box).not_to_be_checked()
    page.locator("form.vote").scroll_into_view_if_needed()
    shoot(page, "voice-vote")

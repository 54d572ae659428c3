"""The leaderboard page in a real Chromium: table, htmx filters and sorting, the SVG plots."""

import re
import threading

import pytest

from arena.models import AIModel
from leaderboard.models import RunTrigger
from leaderboard.runs import services
from testkit.browser import browser_ms, shots_at_each_width

from .factories import make_votes

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture
def rated_board(transactional_db):
    make_votes([
        ("alpha", "beta", "model_a", 12), ("beta", "alpha", "tie", 3),
        ("alpha", "gamma", "model_a", 10), ("gamma", "delta", "model_b", 8),
        ("delta", "beta", "both_bad", 4), ("beta", "gamma", "model_a", 9),
        ("delta", "alpha", "model_b", 6), ("epsilon", "alpha", "model_b", 2),
    ])
    AIModel.objects.filter(slug__in=["alpha", "beta"]).update(organization="Acme")
    AIModel.objects.filter(slug__in=["gamma", "delta"]).update(organization="Zeta")
    run = services.ratings_run(trigger=RunTrigger.COMMAND)
    assert run.status == "succeeded"


@pytest.mark.browser
def test_the_leaderboard_page_its_filters_and_plots_in_chromium(rated_board, live_server):
    playwright = pytest.importorskip("playwright.sync_api")
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(color_scheme="light")
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error"
                    and not m.location.get("url", "").endswith("/favicon.ico") else None)
            page.goto(f"{live_server.url}/leaderboard/")

            rows = page.locator('[data-testid="leaderboard-table"] tbody tr[data-model]')
            assert rows.count() == 4  # epsilon (2 votes) is provisional
            assert page.locator('[data-testid="provisional"] tr[data-model="epsilon"]').count() == 1
            assert rows.first.get_attribute("data-model") == "alpha"
            assert re.search(r"\+\d+/\u2212\d+", rows.first.inner_text())
            assert "votes counted" in page.get_by_test_id("meta").inner_text()

            # The four plots are drawn, sized, with one dot per rated model
            for kind in ("ci", "winrate", "winfraction", "battles"):
                svg = page.locator(f'svg[data-plot="{kind}"]')
                assert svg.count() == 1
                box = svg.bounding_box()
                assert box and box["width"] > 100 and box["height"] > 50
            dots = page.locator('svg[data-plot="ci"] circle.mark')
            assert dots.count() == 4
            assert page.locator('svg[data-plot="winrate"] rect.mark').count() == 4
            assert page.locator('svg[data-plot="winfraction"] rect.cell').count() == 16
            light_text = _fill(page, 'svg[data-plot="ci"] text.lb-label')
            dot_fill = _fill(page, 'svg[data-plot="ci"] circle.mark')
            assert dot_fill not in ("none", "rgba(0, 0, 0, 0)", "rgb(0, 0, 0)")

            # Dark mode: the plot text follows the theme (light text on a dark page)
            page.emulate_media(color_scheme="dark")
            dark_text = _fill(page, 'svg[data-plot="ci"] text.lb-label')
            assert dark_text != light_text
            assert _brightness(dark_text) > _brightness(light_text)
            page.emulate_media(color_scheme="light")

            # Search through htmx: the results fragment is swapped and the URL pushed
            page.get_by_test_id("search").fill("gam")
            page.wait_for_function(
                "() => document.querySelectorAll("
                "'[data-testid=leaderboard-table] tbody tr[data-model]').length === 1")
            assert rows.first.get_attribute("data-model") == "gamma"
            page.wait_for_url(re.compile(r"q=gam"))
            assert page.locator('svg[data-plot="ci"] circle.mark').count() == 1

            # Organisation filter, then sort by votes ascending with the header link
            page.get_by_test_id("search").fill("")
            page.get_by_test_id("organization").select_option("Acme")
            page.wait_for_function(
                "() => [...document.querySelectorAll('[data-testid=leaderboard-table] tbody tr')]"
                ".map(r => r.dataset.model).join() === 'alpha,beta'")
            page.get_by_test_id("sort-votes").click()
            page.wait_for_function(
                "() => document.querySelector('[data-testid=sort-votes]').closest('th')"
                ".getAttribute('aria-sort') === 'descending'")
            page.get_by_test_id("sort-votes").click()
            page.wait_for_function(
                "() => document.querySelector('[data-testid=sort-votes]').closest('th')"
                ".getAttribute('aria-sort') === 'ascending'")
            votes = [int(t) for t in page.locator(
                '[data-testid="leaderboard-table"] tbody tr td:nth-child(6)').all_inner_texts()]
            assert votes == sorted(votes)
            assert "organization=Acme" in page.url
        finally:
            browser.close()
    assert errors == []


def _fill(page, selector: str) -> str:
    return page.locator(selector).first.evaluate("el => getComputedStyle(el).fill")


def _brightness(rgb: str) -> float:
    r, g, b = (int(x) for x in re.findall(r"\d+", rgb)[:3])
    return 0.299 * r + 0.587 * g + 0.114 * b


@pytest.mark.browser
def test_the_leaderboard_fits_a_phone_screen(rated_board, live_server):
    """The plot cards once asked for 26rem each and pushed a 390 px page sideways."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
            page.goto(f"{live_server.url}/leaderboard/")
            assert page.locator('svg[data-plot="ci"]').count() == 1
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, width
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_a_board_row_opens_the_models_page(rated_board, live_server, width):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900},
                                    is_mobile=width < 500)
            page.goto(f"{live_server.url}/leaderboard/")
            page.locator('[data-testid="leaderboard-table"] tr[data-model="alpha"] a').click()
            page.wait_for_url(re.compile(r"/models/alpha/$"))
            card = page.get_by_test_id("model-card")
            assert "Alpha" in card.inner_text()
            assert page.locator('[data-testid="standings"] tr[data-board="text"]').count() == 1
            beta = page.locator('[data-testid="opponents-text"] tr[data-opponent="beta"]')
            assert beta.locator("td").first.inner_text() == "15"  # 12 + 3 votes against beta
            assert page.get_by_test_id("recent").locator("li").count() == 10
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            page.screenshot(path=f"/tmp/model-page-{width}.png", full_page=True)
        finally:
            browser.close()


@pytest.mark.browser
def test_the_category_selector_and_the_style_switch(transactional_db, live_server, settings):
    settings.ARENA_LEADERBOARD_CATEGORY_MIN_VOTES = 20
    make_votes([("alpha", "beta", "model_a", 14), ("beta", "gamma", "model_a", 9),
                ("gamma", "alpha", "tie", 4)], categories=("coding",))
    make_votes([("alpha", "beta", "model_b", 6)], categories=("math",))
    assert services.ratings_run(trigger=RunTrigger.COMMAND).status == "succeeded"
    playwright = pytest.importorskip("playwright.sync_api")
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{live_server.url}/leaderboard/?board=text")
            assert page.get_by_test_id("vote-count").inner_text() == "33"
            assert page.get_by_test_id("category-math").get_attribute("title") \
                == "Needs 14 more votes for a board of its own"

            # The style switch: the style-controlled ratings and their coefficients
            page.get_by_test_id("style-control").check()
            page.wait_for_url(re.compile(r"style=1"))
            page.get_by_test_id("style-note").wait_for()
            page.get_by_test_id("style-control").uncheck()
            page.get_by_test_id("style-note").wait_for(state="detached")

            # A category: the board swaps in place, its votes and URL follow
            page.get_by_test_id("category-coding").click()
            page.wait_for_url(re.compile(r"category=coding"))
            page.wait_for_function(
                "() => document.querySelector('[data-testid=vote-count]').textContent === '27'")
            assert page.get_by_test_id("category-coding").get_attribute("aria-current") == "true"
            assert page.get_by_test_id("style-control").count() == 0  # not fitted per category
            rows = page.locator('[data-testid="leaderboard-table"] tbody tr[data-model]')
            assert rows.first.get_attribute("data-model") == "alpha"

            # Filters keep the category; "All" goes back to the whole board
            page.get_by_test_id("search").fill("gam")
            page.wait_for_url(re.compile(r"q=gam"))
            assert "category=coding" in page.url
            page.get_by_test_id("category-all").click()
            page.wait_for_function(
                "() => document.querySelector('[data-testid=vote-count]').textContent === '33'")
        finally:
            browser.close()
    assert errors == []


@pytest.mark.browser
def test_a_board_waiting_for_its_run_updates_itself_once_the_run_is_in(
        rated_board, live_server, scheduled, tmp_path):
    """Opened right after new votes: the board says they are being counted; once their run
    is in, it shows them without a reload, and keeps the search the person typed meanwhile."""
    from playwright.sync_api import expect

    from leaderboard.tasks import ratings_run_board

    make_votes([("alpha", "beta", "model_a", 2)])
    services.debounced_run_schedule(board_name="text")  # what the votes' commit does
    assert scheduled
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{live_server.url}/leaderboard/")
            expect(page.get_by_test_id("rating-soon")).to_contain_text("being counted")
            counted = int(page.get_by_test_id("vote-count").inner_text())
            list(shots_at_each_width(page, tmp_path, "rating-soon"))
            page.get_by_test_id("search").fill("alp")
            rows = page.locator('[data-testid="leaderboard-table"] tbody tr[data-model]')
            expect(rows).to_have_count(1)

            # The worker, when the countdown ends (in a thread: Playwright's loop runs here).
            worker = threading.Thread(target=ratings_run_board.run, args=("text",))
            worker.start()
            worker.join()
            expect(page.get_by_test_id("vote-count")).to_have_text(str(counted + 2),
                                                                   timeout=browser_ms(30))
            expect(page.get_by_test_id("rating-soon")).to_have_count(0)
            expect(page.get_by_test_id("search")).to_have_value("alp")
            expect(rows).to_have_count(1)
            assert rows.first.get_attribute("data-model") == "alpha"
        finally:
            browser.close()

"""Platform pages in a real Chromium: the API docs with every other host cut off, and the home
page with its figures, favicon and remembered theme."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from arena.testing.browser import browser_page

pytestmark = pytest.mark.browser
SCREENSHOT = Path("/tmp/api-docs.png")
HOME_SCREENSHOT = Path("/tmp/home.png")


def test_api_docs_render_with_no_network(chromium, asgi_live_server, monkeypatch):
    from playwright.sync_api import expect

    with browser_page(chromium, asgi_live_server, monkeypatch,
                      viewport={"width": 1280, "height": 900}) as page:
        elsewhere: list[str] = []

        def only_this_server(route):
            if urlsplit(route.request.url).hostname == "127.0.0.1":
                route.continue_()
            else:
                elsewhere.append(route.request.url)
                route.abort("internetdisconnected")

        page.route("**/*", only_this_server)
        page.goto("/api/docs")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("Arena API")
        create = page.locator(".opblock-post", has_text="/api/battles").first
        expect(create).to_be_visible()
        create.locator(".opblock-summary").click()
        expect(create).to_contain_text("Start a battle")
        page.screenshot(path=str(SCREENSHOT))
        assert elsewhere == []


def test_home_page_figures_favicon_and_a_remembered_theme(chromium, asgi_live_server,
                                                          monkeypatch):
    from playwright.sync_api import expect

    with browser_page(chromium, asgi_live_server, monkeypatch, color_scheme="light",
                      viewport={"width": 1280, "height": 900}) as page:
        missing: list[str] = []
        page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
        page.goto("/")
        figures = page.get_by_test_id("figures")
        expect(figures).to_contain_text("battles fought")
        expect(figures).to_contain_text("last rating run")
        expect(page.get_by_test_id("mode-debates")).to_contain_text("not open yet")
        expect(page.get_by_test_id("mode-battle")).not_to_contain_text("not open yet")
        expect(page.get_by_test_id("mode-battle")).to_contain_text("side by side")
        icon = page.locator('link[rel="icon"]').get_attribute("href")
        assert page.request.get(icon).status == 200

        def background() -> str:
            return page.evaluate("getComputedStyle(document.body).backgroundColor")

        light = background()
        page.get_by_test_id("theme-toggle").click()
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        dark = background()
        assert dark != light
        page.reload()  # the choice is remembered, over the OS's light setting
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        assert background() == dark
        page.screenshot(path=str(HOME_SCREENSHOT))
        page.get_by_test_id("theme-toggle").click()
        expect(page.locator("html")).to_have_attribute("data-theme", "light")
        assert background() == light
        assert missing == []

"""/api/docs in a real Chromium with every other host cut off: it renders the operations."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from arena.testing.browser import browser_page

pytestmark = pytest.mark.browser
SCREENSHOT = Path("/tmp/api-docs.png")


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

"""Platform pages in a real Chromium: the API docs with every other host cut off, and the home
page with its figures, favicon and remembered theme."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from testkit.browser import browser_page

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
        expect(page.get_by_test_id("mode-voice")).not_to_contain_text("not open yet")
        expect(page.get_by_test_id("mode-debates")).not_to_contain_text("not open yet")
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


HOSTILE = [
    "<script>alert(1)</script> **bold**",
    "[click](javascript:alert(1)) and [ok](https://example.org)",
    '<img src=x onerror="alert(1)"> ![pic](javascript:alert(1))',
    "| a | b |\n|---|---|\n| <b onclick=alert(1)>x</b> | y |",
    "```html\n<script>alert(1)</script>\n```",
    "![pixel](https://tracker.example/p.png) <svg onload=alert(1)></svg>",
    "[x](data:text/html,<script>alert(1)</script>) <style>body{display:none}</style>",
]


def test_the_live_render_follows_the_server_policy(chromium, asgi_live_server, monkeypatch):
    """What the browser renders while an answer streams obeys the rules of the server's
    render: the same elements, no script, no event handler, no javascript: URL."""
    from arena.markdown import render_markdown

    inspect = """([text, server]) => {
        function parts(box) {
            box.querySelectorAll('button.copy').forEach(b => b.remove());
            const elements = [...box.querySelectorAll('*')];
            return {tags: [...new Set(elements.map(e => e.tagName.toLowerCase()))].sort(),
                    attributes: elements.flatMap(e => [...e.attributes].map(
                        a => [e.tagName.toLowerCase(), a.name, a.value]))};
        }
        const live = document.createElement('div');
        window.ArenaMarkdown.render(live, text);
        const rendered = document.createElement('div');
        rendered.innerHTML = server;  // parsed only: a detached node runs nothing
        return {live: parts(live), server: parts(rendered)};
    }"""
    with browser_page(chromium, asgi_live_server, monkeypatch) as page:
        page.goto("/battle/")
        page.wait_for_function("() => window.ArenaMarkdown !== undefined")
        for text in HOSTILE:
            found = page.evaluate(inspect, [text, render_markdown(text)])
            for side in ("live", "server"):
                tags, attributes = found[side]["tags"], found[side]["attributes"]
                assert not {"script", "img", "svg", "style"} & set(tags), (side, text, tags)
                for tag, name, value in attributes:
                    assert not name.startswith("on"), (side, text, tag, name)
                    assert not value.strip().lower().startswith("javascript:"), (side, text)
            live_tags = set(found["live"]["tags"]) - {"span"}  # highlight.js's token spans
            assert live_tags == set(found["server"]["tags"]), (text, found)


def test_every_page_fits_a_phone_screen(chromium, asgi_live_server, monkeypatch):
    """Nothing pushes a 390 px page sideways (each page is also shot for a look)."""
    with browser_page(chromium, asgi_live_server, monkeypatch, is_mobile=True, has_touch=True,
                      viewport={"width": 390, "height": 844}) as page:
        widths = {}
        for path in ("/", "/battle/", "/panel/", "/leaderboard/", "/debates/", "/voice/"):
            page.goto(path)
            widths[path] = page.evaluate("document.documentElement.scrollWidth")
            page.screenshot(path=f"/tmp/phone{path.replace('/', '-') or '-home'}.png",
                            full_page=True)
        assert all(width <= 390 for width in widths.values()), widths

"""A real Chromium for page tests: Debian's /usr/bin/chromium driven by Playwright.

Playwright's sync API drives an asyncio loop in greenlets and, between its calls,
leaves that loop marked as *running* in this thread. Django would then refuse the
ORM here (SynchronousOnlyOperation) and pytest-asyncio could not run later async
tests ("another loop is running"). So the loop is parked (unmarked) whenever no
browser test runs, and a browser test allows Django's sync calls from this thread
(DJANGO_ALLOW_ASYNC_UNSAFE, as Django's docs say for notebooks and the like).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from testkit.waiting import ceiling

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def browser_ms(seconds: float) -> int:
    """A page wait's ceiling in Playwright's milliseconds, scaled like every other ceiling
    (:func:`testkit.waiting.ceiling`): a busy machine waits longer, never fails sooner."""
    return int(ceiling(seconds) * 1000)


TIMEOUT_MS = browser_ms(30)
WIDTHS = {"desktop": 1280, "phone": 390}  # the widths every page is looked at


def shots_at_each_width(page, folder: Path, name: str) -> Iterator[int]:
    """The page, whole, at each of :data:`WIDTHS`, as ``folder/name-<label>.png``; yields each
    width after its shot (for the caller's checks at it), then puts the desktop width back."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for label, width in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": 900})
            page.screenshot(path=str(folder / f"{name}-{label}.png"), full_page=True)
            yield width
    finally:
        page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})


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


@contextmanager
def browser_page(chromium: Chromium, base_url: str, monkeypatch, **context_options):
    """A fresh context and page; on exit, fails the test if the page raised a JS error."""
    from django.db import connections
    from playwright.sync_api import expect

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    chromium.wake()
    expect.set_options(timeout=TIMEOUT_MS)
    context = chromium.browser.new_context(base_url=base_url, **context_options)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        try:
            context.close()
        finally:
            # While the loop counts as running, Django keeps this thread's connections
            # apart (asgiref's Local); close them here, or they outlive the test database.
            connections.close_all()
            chromium.park()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def watch_page(page) -> dict[str, list]:  # noqa: ANN001 - a Playwright page
    """Record what hostile text on ``page`` could do: dialogs it opened, requests to any host
    but the test server's (refused), Content-Security-Policy reports and script errors."""
    seen: dict[str, list] = {"dialogs": [], "elsewhere": [], "csp": [], "errors": []}

    def only_this_server(route) -> None:  # noqa: ANN001
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            seen["elsewhere"].append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/*", only_this_server)
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.on("console", lambda msg: seen["csp"].append(msg.text)
            if "Content Security Policy" in msg.text else None)
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    return seen


def assert_unhurt(page, seen: dict[str, list], *, width: int) -> None:  # noqa: ANN001
    """Nothing executed or loaded from elsewhere, no markup survived in shown text, the page
    is not hidden and does not scroll sideways past ``width``."""
    assert seen["dialogs"] == [], seen["dialogs"]
    assert seen["elsewhere"] == [], seen["elsewhere"]
    assert seen["csp"] == [], seen["csp"]
    assert seen["errors"] == [], seen["errors"]
    assert page.evaluate("document.querySelectorAll('.markdown script, .markdown svg, "
                         ".markdown img, .markdown iframe, .markdown style, "
                         "a[href^=javascript], a[href^=data]').length") == 0
    assert page.evaluate("document.body.style.display") != "none"
    assert page.evaluate("document.documentElement.scrollWidth") <= width

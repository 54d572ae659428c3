"""In a real Chromium: signing up by e-mail, the verification mail, its link followed (in
another browser, as from a mail app), signing in from the top bar's "Sign in", and signing
out; the top bar at 1280 and 390 px. Screenshots go to /tmp/shots-signin/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from allauth.account.models import EmailAddress

from testkit.browser import browser_page, shots_at_each_width
from testkit.fake_oauth import sign_in_through

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots-signin")
EMAIL = "grace.hopper@example.com"
PASSWORD = "a long enough passphrase 42"
LINK = re.compile(r"https?://[^\s]+/accounts/confirm-email/[^\s/]+/")


@pytest.fixture
def page(chromium, live_server, monkeypatch) -> Iterator[object]:
    with browser_page(chromium, live_server.url, monkeypatch,
                      viewport={"width": 1280, "height": 900}) as page:
        yield page


def shoot(page, name: str) -> None:
    """The page at each width; at 390 px the top bar must not push the page sideways."""
    for width in shots_at_each_width(page, SHOTS, name):
        assert page.evaluate("document.documentElement.scrollWidth") <= width, (name, width)
        box = page.get_by_test_id("account-corner").bounding_box()
        assert box is not None and box["x"] + box["width"] <= width, (name, width)


def test_sign_up_verify_by_mail_and_sign_in(page, live_server, mailoutbox):
    from playwright.sync_api import expect

    page.goto("/")
    expect(page.get_by_test_id("sign-in")).to_be_visible()
    shoot(page, "home-anonymous")
    page.get_by_test_id("sign-in").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/$"))
    shoot(page, "sign-in")
    page.get_by_role("link", name="sign up").click()
    expect(page).to_have_url(re.compile(r"/accounts/signup/"))
    page.locator("input[name=email]").fill(EMAIL)
    page.locator("input[name=password1]").fill(PASSWORD)
    page.locator("input[name=password2]").fill(PASSWORD)
    shoot(page, "sign-up")
    page.get_by_role("button", name="Sign Up").click()
    expect(page.get_by_role("heading", name="Verify Your Email Address")).to_be_visible()
    expect(page.get_by_test_id("sign-in")).to_be_visible()  # not signed in before verifying
    assert not EmailAddress.objects.get(email=EMAIL).verified

    # The mail, written by the live server (this process, Django's test outbox).
    assert [message.to for message in mailoutbox] == [[EMAIL]]
    assert mailoutbox[0].subject == "[Arena] Please Confirm Your Email Address"
    assert mailoutbox[0].body.startswith("Hello from the Arena (localhost:")
    link = LINK.search(mailoutbox[0].body).group(0)

    # Followed from the mail app: another browser, with no session of the sign-up.
    other = page.context.browser.new_context(base_url=live_server.url,
                                             viewport={"width": 390, "height": 844})
    try:
        mail_app = other.new_page()
        mail_app.goto(link)
        expect(mail_app.get_by_role("heading", name="Confirm Email Address")).to_be_visible()
        mail_app.get_by_role("button", name="Confirm").click()
        expect(mail_app.get_by_test_id("account-messages")).to_contain_text(EMAIL)
        assert EmailAddress.objects.get(email=EMAIL).verified

        # Signed in from a page of the arena: back on that page, the e-mail in the top bar.
        mail_app.goto("/leaderboard/")
        mail_app.get_by_test_id("sign-in").click()
        mail_app.locator("input[name=login]").fill(EMAIL)
        mail_app.locator("input[name=password]").fill(PASSWORD)
        mail_app.get_by_role("button", name="Sign In").click()
        expect(mail_app).to_have_url(re.compile(r"/leaderboard/$"))
        expect(mail_app.get_by_test_id("signed-in-as")).to_have_text(EMAIL)
        expect(mail_app.get_by_test_id("signed-in-as")).to_have_attribute("href", "/me/")
        shoot(mail_app, "leaderboard-signed-in")
        mail_app.goto("/accounts/logout/")
        expect(mail_app.get_by_test_id("sign-out-everywhere")).to_be_visible()
        shoot(mail_app, "sign-out-page")
        mail_app.goto("/leaderboard/")
        mail_app.get_by_test_id("sign-out").click()
        expect(mail_app).to_have_url(re.compile(r"/$"))
        expect(mail_app.get_by_test_id("sign-in")).to_be_visible()
        expect(mail_app.get_by_test_id("signed-in-as")).to_have_count(0)
    finally:
        other.close()


def test_signing_in_with_github_in_the_browser_returns_to_the_page(page, settings, monkeypatch):
    """The provider buttons on the sign-in page, then the whole round trip through a fake
    GitHub (real HTTP: its authorize page sends the browser back with a code, which the server
    exchanges), back on the page the visitor signed in from."""
    from playwright.sync_api import expect

    from testkit.fake_oauth import FakeGitHub, FakeGoogle, Person  # noqa: PLC0415

    with FakeGitHub(Person(id="1", email="octo@example.com")) as github, \
            FakeGoogle(Person(id="2", email="countess@example.org")) as google:
        sign_in_through(settings, monkeypatch, github, google)
        page.goto("/leaderboard/")
        page.get_by_test_id("sign-in").click()
        expect(page.get_by_test_id("provider-github")).to_be_visible()
        expect(page.get_by_test_id("provider-google")).to_be_visible()
        shoot(page, "sign-in-with-providers")
        page.get_by_test_id("provider-github").click()
        page.get_by_role("button", name="Continue").click()
        expect(page).to_have_url(re.compile(r"/leaderboard/$"))
        expect(page.get_by_test_id("signed-in-as")).to_have_text("octo@example.com")
        assert [path for method, path, _ in github.requests if method == "POST"] == [
            github.token_path]

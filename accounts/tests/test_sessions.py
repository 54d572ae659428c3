"""Browser sessions stay Django's: the key rotates at sign-in, "sign out everywhere" ends
every session the person signed in with, the top bar says who is signed in, and the cookies
are secure in production."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.contrib.sessions.models import Session
from django.test import Client

from accounts.models import SignIn
from accounts.tests.support import person, sign_in
from accounts.views import SIGNED_OUT_EVERYWHERE
from releases.tests.support import visitor

pytestmark = pytest.mark.django_db

EVERYWHERE = "/accounts/sign-out-everywhere/"
COOKIE = django_settings.SESSION_COOKIE_NAME


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_the_session_key_rotates_at_sign_in():
    person()
    client = Client()
    before = visitor(client)
    sign_in(client)
    after = client.cookies[COOKIE].value
    assert after != before
    assert not Session.objects.filter(session_key=before).exists()  # the old key is dead
    assert Session.objects.filter(session_key=after).exists()


def test_signing_out_everywhere_ends_every_browsers_session():
    user = person()
    here, there = Client(), Client()
    sign_in(here)
    sign_in(there)
    assert signed_in(here) and signed_in(there)
    someone_else = Client()
    person("grace@example.com")
    sign_in(someone_else, "grace@example.com")
    answer = here.post(EVERYWHERE, follow=True)
    assert answer.redirect_chain == [("/", 302)]
    assert SIGNED_OUT_EVERYWHERE.format(count=2, s="s") in answer.content.decode()
    assert not signed_in(here) and not signed_in(there)
    assert 'data-testid="sign-in"' in there.get("/").content.decode()
    assert not SignIn.objects.filter(user=user).exists()
    assert signed_in(someone_else)  # only the person's own sessions


def test_the_sign_out_page_offers_signing_out_everywhere():
    person()
    client = Client()
    sign_in(client)
    page = client.get("/accounts/logout/").content.decode()
    assert f'action="{EVERYWHERE}"' in page and 'action="/accounts/logout/"' in page


def test_sign_out_everywhere_is_a_post_of_a_signed_in_person():
    person()
    client = Client()
    sign_in(client)
    assert client.get(EVERYWHERE).status_code == 405  # a link or an image cannot sign out
    assert signed_in(client)
    anonymous = Client()
    answer = anonymous.post(EVERYWHERE)
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")


def test_a_form_post_without_the_csrf_token_is_refused():
    person()
    client = Client(enforce_csrf_checks=True)
    sign_in_page = client.get("/accounts/login/")
    client.post("/accounts/login/", {"login": "ada@example.com",
                                     "password": "a long enough passphrase 42",
                                     "csrfmiddlewaretoken": sign_in_page.context["csrf_token"]})
    assert signed_in(client)
    assert client.post(EVERYWHERE).status_code == 403
    assert signed_in(client)


def test_the_top_bar_says_sign_in_or_who_is_signed_in():
    anonymous = Client().get("/leaderboard/").content.decode()
    assert 'href="/accounts/login/?next=%2Fleaderboard%2F"' in anonymous
    assert 'data-testid="sign-out"' not in anonymous
    person()
    client = Client()
    sign_in(client)
    page = client.get("/").content.decode()
    assert 'data-testid="signed-in-as">ada@example.com</a>' in page
    assert 'href="/me/"' in page and 'data-testid="sign-out"' in page
    assert 'data-testid="sign-in"' not in page
    client.post("/accounts/logout/")
    assert 'data-testid="sign-in"' in client.get("/").content.decode()


@pytest.mark.parametrize("path", ["/accounts/login/", "/accounts/signup/",
                                  "/accounts/password/reset/"])
def test_the_account_pages_are_in_the_arenas_layout(client, path):
    page = client.get(path).content.decode()
    assert 'class="topbar"' in page and "css/arena.css" in page and "css/accounts.css" in page
    assert 'class="account-form"' in page


@pytest.mark.parametrize("path", ["/accounts/email/", "/accounts/3rdparty/",
                                  "/accounts/password/change/", "/accounts/logout/"])
def test_a_signed_in_persons_account_pages_are_in_the_layout_too(path):
    person()
    client = Client()
    sign_in(client)
    answer = client.get(path)
    page = answer.content.decode()
    assert answer.status_code == 200
    assert 'class="topbar"' in page and 'data-testid="signed-in-as">ada@example.com' in page


PRODUCTION_COOKIES = """
import django
django.setup()
from django.conf import settings
print(settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, settings.SESSION_COOKIE_HTTPONLY)
"""


@pytest.mark.parametrize(("env", "secure"), [("production", "True True True"),
                                             ("development", "False False True")])
def test_cookies_are_secure_in_production(tmp_path, env, secure):
    variables = {**os.environ, "ARENA_VAR_DIR": str(tmp_path), "ARENA_ENV": env,
                 "SECRET_KEY": "k" * 60, "ALLOWED_HOSTS": "arena.example.org"}
    result = subprocess.run([sys.executable, "-c", PRODUCTION_COOKIES], env=variables,
                            cwd=django_settings.BASE_DIR, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == secure


@pytest.mark.parametrize("path", ["/accounts/login/", "/accounts/signup/"])
def test_signing_in_and_up_say_it_is_optional_and_link_the_privacy_page(client, path):
    page = client.get(path).content.decode()
    assert 'data-testid="privacy-note"' in page and 'href="/privacy/"' in page
    assert client.get("/privacy/").status_code == 200

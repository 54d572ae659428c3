"""Signing in with GitHub and Google through allauth's own views, against local fake servers
that speak each provider's authorize, token and user endpoints over real HTTP; the buttons
only where a provider is configured; nothing of the provider's profile kept but the e-mail
and the account's id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount, SocialToken
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.models import Profile
from battles.models import Battle
from battles.tests.factories import answered_battle
from releases.tests.support import visitor
from testkit.fake_oauth import FakeGitHub, FakeGoogle, Person, sign_in_through

pytestmark = pytest.mark.django_db

LOGIN_PAGE = "/accounts/login/"


@pytest.fixture
def github(settings, monkeypatch) -> Iterator[FakeGitHub]:
    with FakeGitHub(Person(id="583231", email="octo@example.com",
                           other_emails=["octo@work.example.com"])) as fake:
        sign_in_through(settings, monkeypatch, fake)
        yield fake


@pytest.fixture
def google(settings, monkeypatch) -> Iterator[FakeGoogle]:
    with FakeGoogle(Person(id="110248495921238986420", email="countess@example.org")) as fake:
        sign_in_through(settings, monkeypatch, fake)
        yield fake


def sign_in_with(client: Client, provider: str, fake) -> str:
    """The whole dance, as a browser does it: allauth's page and its form, the provider's
    authorize page (which approves at once and sends the browser back with a code), then the
    callback, where allauth exchanges the code with the fake over HTTP. Where it ends."""
    page = client.get(f"/accounts/{provider}/login/")
    assert page.status_code == 200  # a form: a GET alone signs nobody in
    to_provider = client.post(f"/accounts/{provider}/login/")
    assert to_provider.status_code == 302
    authorize = to_provider["Location"]
    assert authorize.startswith(fake.base_url + fake.authorize_path)
    assert parse_qs(urlsplit(authorize).query)["client_id"] == [fake.client_id]
    approved = httpx.get(authorize, follow_redirects=False)
    assert approved.status_code == 302
    back = urlsplit(approved.headers["location"])
    assert back.path == f"/accounts/{provider}/login/callback/"
    done = client.get(back.path, {k: v[0] for k, v in parse_qs(back.query).items()})
    assert done.status_code == 302, done.content.decode()[:2000]
    return done["Location"]


def only_the_email_and_the_id_were_kept(provider: str, person: Person):
    user = get_user_model().objects.get(email=person.email)
    account = SocialAccount.objects.get(user=user)
    assert (account.provider, account.uid) == (provider, person.id)
    assert account.extra_data == {}  # no name, avatar, location, company...
    assert (user.first_name, user.last_name) == ("", "")
    assert person.name.split()[0].lower() not in user.username.lower()
    assert not SocialToken.objects.exists()  # the provider's token is used once, never kept
    assert EmailAddress.objects.get(user=user).verified  # one: not every address they have
    return user


@pytest.mark.parametrize("provider", ["github", "google"])
def test_signing_in_with_a_provider_makes_the_account_and_keeps_the_visitors_battle(
        provider, request):
    fake = request.getfixturevalue(provider)
    client = Client()
    battle = answered_battle(session_key=visitor(client))
    assert sign_in_with(client, provider, fake) == django_settings.LOGIN_REDIRECT_URL
    user = only_the_email_and_the_id_were_kept(provider, fake.person)
    account_key = Profile.objects.get(user=user).visitor_key
    assert Battle.objects.get(pk=battle.pk).session_key == account_key
    page = client.get("/").content.decode()
    assert fake.person.email in page and 'data-testid="sign-in"' not in page
    # The code was exchanged and the person read over HTTP, by allauth, with the token.
    paths = [path for _, path, _ in fake.requests]
    assert fake.token_path in paths


def test_github_is_asked_for_the_verified_address_with_the_token(github):
    sign_in_with(Client(), "github", github)
    asked = {path: headers for method, path, headers in github.requests if method == "GET"}
    assert asked["/api/v3/user/emails"]["authorization"].startswith("token ")
    assert set(github.scopes[0].split()) == {"read:user", "user:email"}


def test_google_is_asked_for_the_address_and_nothing_of_the_profile(google):
    sign_in_with(Client(), "google", google)
    assert set(google.scopes[0].split()) == {"openid", "email"}


def test_signing_in_again_finds_the_same_account_and_keeps_nothing_more(github):
    sign_in_with(Client(), "github", github)
    sign_in_with(Client(), "github", github)
    assert get_user_model().objects.count() == 1
    only_the_email_and_the_id_were_kept("github", github.person)


def test_an_unverified_github_address_is_not_signed_in_without_a_mail(github, mailoutbox):
    github.person.verified = False
    end = sign_in_with(Client(), "github", github)
    assert end == "/accounts/confirm-email/"
    assert [github.person.email] == mailoutbox[0].to
    assert not EmailAddress.objects.get(email=github.person.email).verified


def test_a_code_is_good_once(github):
    client = Client()
    client.get("/accounts/github/login/")
    authorize = client.post("/accounts/github/login/")["Location"]
    back = urlsplit(httpx.get(authorize).headers["location"])
    query = {k: v[0] for k, v in parse_qs(back.query).items()}
    assert client.get(back.path, query).status_code == 302
    again = Client()
    again.get("/accounts/github/login/")
    again.post("/accounts/github/login/")
    replay = again.get(back.path, query)  # another browser, someone else's code and state
    assert replay.status_code == 401 and b"Third-Party Login Failure" in replay.content
    assert get_user_model().objects.count() == 1


def test_the_fake_googles_id_token_verifies_against_its_published_keys(google):
    """What allauth does with a token it did not fetch itself (Google's One Tap): the
    signature checked with the key the certificates endpoint publishes."""
    from allauth.socialaccount.internal import jwtkit

    data = jwtkit.verify_and_decode(
        credential=google.id_token(), keys_url=f"{google.base_url}/oauth2/v1/certs",
        issuer="https://accounts.google.com", audience=google.client_id,
        lookup_kid=jwtkit.lookup_kid_pem_x509_certificate)
    assert data["sub"] == google.person.id
    with pytest.raises(Exception, match="Invalid id_token"):
        jwtkit.verify_and_decode(
            credential=google.id_token(), keys_url=f"{google.base_url}/oauth2/v3/certs",
            issuer="https://accounts.google.com", audience="someone-else",
            lookup_kid=jwtkit.lookup_kid_jwk)


def test_the_sign_in_page_shows_only_the_configured_providers(settings, github):
    page = Client().get(LOGIN_PAGE).content.decode()
    assert 'data-testid="provider-github"' in page
    assert 'data-testid="provider-google"' not in page
    settings.SOCIALACCOUNT_PROVIDERS = {}
    for path in (LOGIN_PAGE, "/accounts/signup/"):
        page = Client().get(path).content.decode()
        assert 'data-testid="provider-' not in page and "third-party" not in page.lower()


def test_an_unconfigured_provider_cannot_be_started(settings):
    settings.SOCIALACCOUNT_PROVIDERS = {}
    assert Client().post("/accounts/github/login/").status_code == 404


PROVIDER_URLS = """
import json, django
django.setup()
from django.conf import settings
from allauth.socialaccount.providers.github.views import GitHubOAuth2Adapter as G
from allauth.socialaccount.providers.google import views
g = views.GoogleOAuth2Adapter
print(json.dumps({"github": [G.authorize_url, G.access_token_url, G.profile_url, G.emails_url],
                  "google": [g.authorize_url, g.access_token_url, g.identity_url,
                             views.CERTS_URL],
                  "form-action": settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]["form-action"]}))
"""


def test_the_base_url_variables_reach_allauth_in_a_fresh_process(tmp_path):
    """ARENA_GITHUB_URL and ARENA_GOOGLE_URL point allauth at a stand-in: each URL it will
    call is one the fakes answer (allauth reads them when its views are imported)."""
    env = {**os.environ, "ARENA_VAR_DIR": str(tmp_path), "ARENA_ENV": "development",
           "GITHUB_CLIENT_ID": "id", "GITHUB_CLIENT_SECRET": "secret",
           "GOOGLE_CLIENT_ID": "id", "GOOGLE_CLIENT_SECRET": "secret",
           "ARENA_GITHUB_URL": "http://127.0.0.1:9/", "ARENA_GOOGLE_URL": "http://127.0.0.1:8"}
    result = subprocess.run([sys.executable, "-c", PROVIDER_URLS], cwd=django_settings.BASE_DIR,
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    urls = json.loads(result.stdout.strip().splitlines()[-1])
    github = "http://127.0.0.1:9"
    assert urls["github"] == [github + FakeGitHub.authorize_path, github + FakeGitHub.token_path,
                              f"{github}/api/v3/user", f"{github}/api/v3/user/emails"]
    google = "http://127.0.0.1:8"
    assert urls["google"] == [google + FakeGoogle.authorize_path, google + FakeGoogle.token_path,
                              f"{google}/oauth2/v2/userinfo", f"{google}/oauth2/v1/certs"]
    # The browser may be sent on to them from the sign-in form (Content-Security-Policy).
    assert urls["form-action"] == ["'self'", github, google]

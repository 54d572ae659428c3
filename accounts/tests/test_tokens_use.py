"""A script with a person's API token acts as them on every JSON API; a bad token gets 401."""

from __future__ import annotations

import json

import pytest
from django.contrib.sessions.models import Session
from django.test import Client

from accounts.middleware import INVALID_TOKEN
from accounts.models import ApiToken, Profile
from accounts.tests.support import person, sign_in
from accounts.tokens import token_create, token_revoke
from agents.tests.voice_support import echo_agents, make_battle
from arena.api_writes import CROSS_SITE_WRITE
from battles.models import Battle
from battles.tests.conftest import two_models  # noqa: F401 - a fixture
from battles.tests.factories import answered_battle

INVALID = 'Bearer realm="arena", error="invalid_token"'
ELSEWHERE = "https://scripts.example.org"
# One reading of each JSON API: battles and sessions, panels, debates, voice (seed 002's own
# paths), the leaderboard, the models.
READS = ["/api/sessions", "/api/battles", "/api/panels", "/api/debates", "/api/leaderboard",
         "/api/models", "/battles/00000000-0000-0000-0000-000000000000"]


def post(client: Client, url: str, payload: dict, **headers):
    return client.post(url, json.dumps(payload), content_type="application/json", **headers)


def bearer(secret: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def account_key_of(user) -> str:
    return Profile.objects.get_or_create(user=user)[0].visitor_key


@pytest.fixture
def quick_api(settings, fake_openai):
    """The API stops waiting for the answers at once (504) and keeps the battle."""
    fake_openai.first_token_delay = 1.0
    settings.ARENA_API_WAIT_SECONDS = 0.05
    return settings


@pytest.mark.django_db(transaction=True)
def test_a_battle_created_with_a_token_is_the_persons_in_their_browser(two_models,  # noqa: F811
                                                                       quick_api):
    user = person()
    _, secret = token_create(user, "script")
    script = Client()
    started = post(script, "/api/battles", {"prompt": "Name a sea."}, **bearer(secret))
    assert started.status_code in (200, 504), started.content
    battle = Battle.objects.get()
    assert battle.session_key == account_key_of(user)
    assert not script.cookies and Session.objects.count() == 0  # no session was made for it
    browser = Client()
    sign_in(browser)
    sessions = browser.get("/api/sessions").json()
    assert sessions["total"] == 1
    assert Client().get("/api/sessions").json()["total"] == 0
    # The script reads it back as the person.
    assert script.get("/api/sessions", **bearer(secret)).json()["total"] == 1


@pytest.mark.django_db
class TestEveryApi:
    @pytest.mark.parametrize("url", READS)
    def test_an_unknown_token_is_refused_before_any_view_runs(self, url):
        answer = Client().get(url, **bearer("arena_not-a-token-anyone-made"))
        assert answer.status_code == 401
        assert answer["WWW-Authenticate"] == INVALID
        assert answer.json() == {"detail": INVALID_TOKEN}

    @pytest.mark.parametrize("url", READS[:-1])
    def test_a_valid_token_is_accepted(self, url):
        _, secret = token_create(person(), "script")
        assert Client().get(url, **bearer(secret)).status_code == 200

    def test_the_voice_apis_own_paths_answer_the_persons_battles(self):
        user = person()
        _, secret = token_create(user, "script")
        battle = make_battle(account_key_of(user), echo_agents())
        url = f"/battles/{battle.pk}"
        assert Client().get(url, **bearer(secret)).status_code == 200
        assert Client().get(url).status_code == 404

    def test_a_write_with_an_unknown_token_changes_nothing(self):
        answer = post(Client(), "/api/tokens", {"name": "x"}, **bearer("arena_nope"))
        assert answer.status_code == 401 and answer["WWW-Authenticate"] == INVALID
        assert not ApiToken.objects.exists()

    def test_a_token_without_the_prefix_or_an_empty_bearer_is_unknown(self):
        for header in ("Bearer ", "Bearer something-else", "bearer    "):
            answer = Client().get("/api/sessions", HTTP_AUTHORIZATION=header)
            assert answer.status_code == 401, header
            assert answer["WWW-Authenticate"] == INVALID

    def test_pages_and_health_checks_leave_the_header_alone(self):
        for url in ("/", "/healthz", "/api/health"):
            assert Client().get(url, **bearer("arena_nope")).status_code == 200, url


@pytest.mark.django_db
class TestRevoked:
    def test_a_revoked_token_gets_401_at_once(self):
        user = person()
        token, secret = token_create(user, "script")
        answered_battle(session_key=account_key_of(user))
        assert Client().get("/api/sessions", **bearer(secret)).json()["total"] == 1
        token_revoke(user, token.pk)
        refused = Client().get("/api/sessions", **bearer(secret))
        assert refused.status_code == 401
        assert refused["WWW-Authenticate"] == INVALID

    def test_revoked_from_the_api_it_stops_working(self):
        user = person()
        token, secret = token_create(user, "script")
        browser = Client()
        sign_in(browser)
        assert browser.delete(f"/api/tokens/{token.pk}").status_code == 204
        assert Client().get("/api/tokens", **bearer(secret)).status_code == 401

    def test_the_person_can_no_longer_sign_in_their_token_stops_too(self):
        user = person()
        _, secret = token_create(user, "script")
        user.is_active = False
        user.save()
        assert Client().get("/api/sessions", **bearer(secret)).status_code == 401


@pytest.mark.django_db
class TestCrossOrigin:
    """Django's test client skips the CSRF part of the write guard unless told not to."""

    def test_a_token_write_from_another_origin_is_accepted(self):
        _, secret = token_create(person(), "script")
        script = Client(enforce_csrf_checks=True)
        made = post(script, "/api/tokens", {"name": "from CI"}, HTTP_ORIGIN=ELSEWHERE,
                    **bearer(secret))
        assert made.status_code == 201, made.content
        assert ApiToken.objects.filter(name="from CI").exists()

    def test_a_cookie_write_from_another_origin_is_still_refused(self):
        person()
        signed_in = Client()
        sign_in(signed_in)
        browser = Client(enforce_csrf_checks=True)
        browser.cookies = signed_in.cookies
        refused = post(browser, "/api/tokens", {"name": "planted"}, HTTP_ORIGIN=ELSEWHERE)
        assert refused.status_code == 403
        assert refused.json() == {"detail": CROSS_SITE_WRITE}
        # ... and an unknown token beside the cookie does not let it through either.
        refused = post(browser, "/api/tokens", {"name": "planted"}, HTTP_ORIGIN=ELSEWHERE,
                       **bearer("arena_guessed"))
        assert refused.status_code == 401
        assert not ApiToken.objects.exists()
        # The same browser from the site itself may.
        made = post(browser, "/api/tokens", {"name": "mine"},
                    HTTP_ORIGIN="http://testserver")
        assert made.status_code == 201, made.content

    def test_a_token_write_must_still_be_json(self):
        _, secret = token_create(person(), "script")
        answer = Client(enforce_csrf_checks=True).post(
            "/api/tokens", "name=x", content_type="text/plain", HTTP_ORIGIN=ELSEWHERE,
            **bearer(secret))
        assert answer.status_code == 415


async def test_a_public_answer_kept_in_memory_is_not_repeated_to_a_request_with_a_token():
    """The web process repeats a public board without Django (arena.edge); a request with a
    token goes through Django, which refuses an unknown one."""
    from arena.edge import PublicAnswers

    seen = []

    async def app(scope, receive, send):
        seen.append(scope)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"cache-control", b"public, max-age=60")]})
        await send({"type": "http.response.body", "body": b"{}"})

    async def ignore(message):
        return None

    edge = PublicAnswers(app)
    for headers in ([], [], [(b"authorization", b"Bearer arena_x")]):
        await edge({"type": "http", "method": "GET", "path": "/api/leaderboard",
                    "query_string": b"", "headers": headers}, None, ignore)
    assert len(seen) == 2  # the second was repeated from memory, the third was not

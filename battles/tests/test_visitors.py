"""Visitors as the API sees them: rate limits by IP and session, per-provider budgets,
sessions created only by writes and kept whatever the status of the first answer."""

from __future__ import annotations

import json

import pytest
from django.contrib.sessions.models import Session
from django.test import Client

from arena.ratelimit import PROVIDER_BUSY
from battles.models import Battle
from battles.tests.conftest import neutral_reply
from testkit.fake_providers import Behaviour, FakeOpenAIServer
from testkit.live import keyless
from testkit.waiting import wait_for


def post(client: Client, url: str, payload: dict, **headers):
    return client.post(url, json.dumps(payload), content_type="application/json", **headers)


@pytest.fixture
def quick_api(settings, fake_openai):
    """The API gives up waiting at once (504) and keeps the battle. An answer takes at
    least a second (the fake's first token comes no sooner), so a wait of 0.05 s never
    sees one, even where an earlier test left the session's worker running."""
    fake_openai.first_token_delay = 1.0
    settings.ARENA_API_WAIT_SECONDS = 0.05
    settings.ARENA_BATTLES_PER_MINUTE = 5
    return settings


@pytest.mark.django_db(transaction=True)
class TestRateLimits:
    def test_cookieless_requests_are_limited_by_ip_and_the_refused_ones_create_nothing(
            self, two_models, quick_api):
        statuses = [post(Client(), "/api/battles", {"prompt": "hi"}).status_code
                    for _ in range(8)]
        assert statuses == [504] * 5 + [429] * 3
        assert Battle.objects.count() == 5
        assert Session.objects.count() == 5  # one per accepted write, none for the refused

    def test_a_429_says_when_to_try_again(self, two_models, quick_api):
        client = Client()
        for _ in range(5):
            post(client, "/api/battles", {"prompt": "hi"})
        refused = post(client, "/api/battles", {"prompt": "hi"})
        assert refused.status_code == 429
        assert 1 <= int(refused["Retry-After"]) <= 60
        assert f"{refused['Retry-After']} s" in refused.json()["detail"]

    def test_behind_a_trusted_proxy_each_client_address_has_its_own_allowance(
            self, two_models, quick_api):
        quick_api.ARENA_TRUSTED_PROXY_HEADER = "X-Forwarded-For"
        for _ in range(5):
            post(Client(), "/api/battles", {"prompt": "hi"},
                 HTTP_X_FORWARDED_FOR="203.0.113.7")
        assert post(Client(), "/api/battles", {"prompt": "hi"},
                    HTTP_X_FORWARDED_FOR="203.0.113.7").status_code == 429
        assert post(Client(), "/api/battles", {"prompt": "hi"},
                    HTTP_X_FORWARDED_FOR="10.0.0.1, 203.0.113.8").status_code == 504

    def test_a_client_named_for_raised_limits_gets_more_and_only_it(
            self, two_models, quick_api):
        quick_api.ARENA_BATTLES_PER_MINUTE = 1
        quick_api.ARENA_RATE_LIMIT_RAISED_FOR = "127.0.0.2/32, 2001:db8::/64"
        quick_api.ARENA_RATE_LIMIT_RAISED_MULTIPLIER = 3
        load = [post(Client(REMOTE_ADDR="127.0.0.2"), "/api/battles", {"prompt": "hi"})
                .status_code for _ in range(4)]
        assert load == [504] * 3 + [429]
        public = [post(Client(REMOTE_ADDR="127.0.0.3"), "/api/battles", {"prompt": "hi"})
                  .status_code for _ in range(2)]
        assert public == [504, 429]

    def test_every_write_endpoint_and_form_is_limited(self, two_models, quick_api):
        quick_api.ARENA_WRITES_PER_MINUTE = 1
        quick_api.ARENA_PANELS_PER_MINUTE = 1
        client = Client()
        battle_id = post(client, "/api/battles", {"prompt": "hi"}).json().get("battle_id")
        battle_id = battle_id or str(Battle.objects.get().id)
        writes = [
            lambda: post(client, f"/api/battles/{battle_id}/vote", {"vote": "tie"}),
            lambda: post(client, f"/api/battles/{battle_id}/messages", {"prompt": "more"}),
            lambda: client.post(f"/battle/{battle_id}/vote", {"vote": "tie"}),
        ]
        first = writes[0]()
        assert first.status_code != 429
        for write in writes[1:]:
            assert write().status_code == 429
        assert post(client, "/api/panel/run", {"question": "Why?"}).status_code != 429
        assert post(client, "/api/panel/run", {"question": "Why?"}).status_code == 429
        assert client.post("/panel/", {"question": "Why?"}).status_code == 429

    def test_a_provider_budget_refuses_new_work_for_a_busy_provider(self, two_models,
                                                                    quick_api):
        quick_api.ARENA_PROVIDER_CALLS_PER_MINUTE = 3  # both models are on one provider
        assert post(Client(), "/api/battles", {"prompt": "hi"}).status_code == 504
        refused = post(Client(), "/api/battles", {"prompt": "hi"})
        assert refused.status_code == 429
        assert refused.json()["detail"].startswith(PROVIDER_BUSY.split("(")[0])
        assert Battle.objects.count() == 1


@pytest.mark.django_db(transaction=True)
class TestSessions:
    def test_reading_without_a_cookie_creates_no_session(self, two_models):
        client = Client()
        for url in ("/api/battles", "/api/models", "/battle/", "/panel/", "/leaderboard/",
                    "/api/leaderboard", "/"):
            response = client.get(url)
            assert response.status_code == 200, url
            assert "sessionid" not in response.cookies, url
        assert Session.objects.count() == 0

    def test_a_new_visitor_keeps_a_battle_still_being_written_504(self, two_models, quick_api):
        client = Client()
        response = post(client, "/api/battles", {"prompt": "hi"})
        assert response.status_code == 504
        assert "sessionid" in response.cookies
        battle = Battle.objects.get()
        seen = client.get(f"/api/battles/{battle.id}")
        assert seen.status_code == 200 and seen.json()["battle_id"] == str(battle.id)

    def test_a_new_visitor_keeps_a_battle_whose_side_failed_502_and_can_retry_it(
            self, celery_worker, two_models, fast_llm_retries):
        broken = FakeOpenAIServer(default=Behaviour.status(500), api_key=None,
                                  reply_text=neutral_reply).start()
        try:
            for model in two_models:
                model.base_url = broken.base_url
                model.api_key_env = ""
                model.save()
            client = Client()  # a fresh cookie jar
            response = post(client, "/api/battles", {"prompt": "hello"})
            assert response.status_code == 502
            assert "sessionid" in response.cookies
            battle_id = str(Battle.objects.get().id)
            assert client.get(f"/api/battles/{battle_id}").status_code == 200
            broken.default = Behaviour.ok()
            left = post(client, f"/api/battles/{battle_id}/retry", {"position": "left"})
            right = post(client, f"/api/battles/{battle_id}/retry", {"position": "right"})
        finally:
            broken.stop()
        assert left.status_code == 502 and "The right answer failed" in left.json()["detail"]
        assert right.status_code == 200
        assert all(r["text"] for r in right.json()["responses"])


@pytest.mark.django_db(transaction=True)
def test_a_first_request_whose_connection_drops_still_gets_its_battle_written(
        asgi_live_server, celery_worker, two_models, fake_openai):
    """The caller hangs up while the answers are being written: nothing is lost."""
    import socket
    from urllib.parse import urlsplit

    keyless(fake_openai, two_models, token_delay=0.05)
    url = urlsplit(asgi_live_server)
    body = json.dumps({"prompt": "Are you still there?"}).encode()
    with socket.create_connection((url.hostname, url.port), timeout=10) as conn:
        conn.sendall(f"POST /api/battles HTTP/1.1\r\nHost: {url.netloc}\r\n"
                     f"Origin: {asgi_live_server}\r\n".encode()
                     + b"Content-Type: application/json\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        wait_for(lambda: len(fake_openai.chat_requests) >= 2, what="the battle under way")
    # The connection is closed; the worker writes both answers all the same.
    battle = wait_for(lambda: Battle.objects.first(), what="the battle")
    wait_for(lambda: all(r.is_finished for t in battle.turns.all() for r in t.responses.all()),
             what="both answers")
    assert all(r.text for t in battle.turns.all() for r in t.responses.all())

"""The seed-000 JSON API, end to end through a real worker and the fake provider."""

import json

import pytest
from django.test import Client

from arena.contests import voting
from battles import services
from battles.models import Battle, Vote
from battles.tests.conftest import assert_blind, neutral_reply
from battles.tests.factories import answered_battle
from testkit.fake_providers import Behaviour, FakeOpenAIServer


def post(client: Client, url: str, payload: dict):
    return client.post(url, data=json.dumps(payload), content_type="application/json")


@pytest.fixture
def api_battle(celery_worker, two_models):
    client = Client()
    response = post(client, "/api/battles", {"prompt": "What is the capital of France?"})
    assert response.status_code == 200, response.content
    return client, response


class TestBattleFlow:
    def test_create_answers_once_with_both_responses_in_seed_shape(self, api_battle):
        _, response = api_battle
        body = response.json()
        # Seed 000's three fields, and the session (seed 001) the battle opened.
        assert set(body) == {"battle_id", "message_id", "responses", "session_id"}
        assert [r["position"] for r in body["responses"]] == ["left", "right"]
        for r in body["responses"]:
            assert "France" in r["text"]
            assert r["latency_ms"] is None  # a timing tells models apart: after the vote only

    def test_follow_up_then_vote_reveals_the_models(self, api_battle, two_models):
        client, created = api_battle
        battle_id = created.json()["battle_id"]
        follow = post(client, f"/api/battles/{battle_id}/messages", {"prompt": "And Spain?"})
        assert follow.status_code == 200
        assert follow.json()["message_id"] != created.json()["message_id"]
        voted = post(client, f"/api/battles/{battle_id}/vote", {"vote": "left_better"})
        assert voted.status_code == 200
        body = voted.json()
        assert body["vote"] == "left_better"
        assert set(body["revealed_models"].values()) == {m.slug for m in two_models}
        battle = Battle.objects.get(pk=battle_id)
        left = battle.model_a if battle.model_a_position == "left" else battle.model_b
        assert body["revealed_models"]["left"] == left.slug

    def test_nothing_names_a_model_before_the_vote(self, api_battle, fake_openai):
        client, created = api_battle
        battle_id = created.json()["battle_id"]
        payloads = [created.content.decode(), json.dumps(dict(created.headers))]
        for url in (f"/api/battles/{battle_id}", "/api/battles", f"/battle/{battle_id}/",
                    f"/battle/{battle_id}/controls", "/battle/"):
            page = client.get(url)
            assert page.status_code == 200
            payloads += [page.content.decode(), json.dumps(dict(page.headers))]
        follow = post(client, f"/api/battles/{battle_id}/messages", {"prompt": "More?"})
        payloads += [follow.content.decode(), json.dumps(dict(follow.headers))]
        for payload in payloads:
            assert_blind(payload, fake_openai.base_url)

        voted = post(client, f"/api/battles/{battle_id}/vote", {"vote": "tie"})
        after = client.get(f"/api/battles/{battle_id}").json()
        assert voted.status_code == 200
        assert after["revealed_models"]["left"]["model_id"] in ("alpha-7b", "beta-3b")

    def test_history_lists_only_the_callers_battles(self, api_battle):
        client, created = api_battle
        mine = client.get("/api/battles").json()["battles"]
        assert [b["battle_id"] for b in mine] == [created.json()["battle_id"]]
        assert mine[0]["title"] == "What is the capital of France?"
        assert Client().get("/api/battles").json() == {"battles": []}


class TestErrors:
    @pytest.mark.parametrize(
        ("payload", "status", "needle"),
        [
            ({"prompt": ""}, 400, "cannot be empty"),
            ({"prompt": "   "}, 400, "cannot be empty"),
            ({"prompt": "x" * 30_001}, 422, "30,000"),
            ({}, 422, "prompt"),
            ({"prompt": ["not", "text"]}, 422, "prompt"),
        ],
    )
    def test_bad_prompts_get_a_clear_error(self, db, two_models, payload, status, needle):
        response = post(Client(), "/api/battles", payload)
        assert response.status_code == status
        assert needle in response.json()["detail"]
        assert Battle.objects.count() == 0

    def test_unknown_battle_is_404(self, db):
        client = Client()
        for url in ("/api/battles/00000000-0000-0000-0000-000000000000", "/api/battles/nope"):
            response = client.get(url)
            assert response.status_code == 404
            assert response.json() == {"detail": "Battle not found."}

    def test_other_sessions_get_404_before_the_vote_and_read_only_after(self, api_battle):
        client, created = api_battle
        battle_id = created.json()["battle_id"]
        stranger = Client()
        assert stranger.get(f"/api/battles/{battle_id}").status_code == 404
        assert stranger.get(f"/battle/{battle_id}/").status_code == 404
        assert post(stranger, f"/api/battles/{battle_id}/vote", {"vote": "tie"}).status_code == 404
        post(client, f"/api/battles/{battle_id}/vote", {"vote": "tie"})
        assert stranger.get(f"/api/battles/{battle_id}").status_code == 200
        page = stranger.get(f"/battle/{battle_id}/")
        assert page.status_code == 200 and b"Only the person who started" not in page.content
        assert post(stranger, f"/api/battles/{battle_id}/messages",
                    {"prompt": "hi"}).status_code == 404

    def test_double_vote_is_409_and_keeps_the_first(self, api_battle):
        client, created = api_battle
        battle_id = created.json()["battle_id"]
        first = post(client, f"/api/battles/{battle_id}/vote", {"vote": "left_better"})
        assert first.status_code == 200
        again = post(client, f"/api/battles/{battle_id}/vote", {"vote": "right_better"})
        assert again.status_code == 409
        assert again.json()["detail"] == services.BATTLE_ALREADY_VOTED
        assert Vote.objects.get(battle_id=battle_id).choice == "left_better"

    def test_unknown_vote_value_is_422(self, api_battle):
        client, created = api_battle
        response = post(client, f"/api/battles/{created.json()['battle_id']}/vote",
                        {"vote": "left"})
        assert response.status_code == 422
        assert response.json()["detail"] == voting.INVALID_VOTE

    def test_the_sixth_follow_up_is_refused(self, db, client):
        client.get("/battle/")  # start a session
        session_key = client.session.session_key or _start_session(client)
        battle = answered_battle(turns=6, session_key=session_key)
        response = post(client, f"/api/battles/{battle.id}/messages", {"prompt": "seventh"})
        assert response.status_code == 409
        assert response.json()["detail"] == services.MESSAGE_LIMIT_REACHED

    @pytest.fixture
    def one_battle_per_minute(self, settings):
        settings.ARENA_BATTLES_PER_MINUTE = 1

    def test_too_many_battles_is_429(self, one_battle_per_minute, api_battle):
        client, _ = api_battle
        response = post(client, "/api/battles", {"prompt": "another"})
        assert response.status_code == 429
        assert "Too many requests" in response.json()["detail"]
        assert 1 <= int(response["Retry-After"]) <= 60

    def test_a_provider_that_keeps_failing_gives_502_and_keeps_the_battle(
        self, celery_worker, two_models, fast_llm_retries
    ):
        broken = FakeOpenAIServer(default=Behaviour.malformed(), api_key=None,
                                  reply_text=neutral_reply).start()
        broken_url = broken.base_url
        try:
            for model in two_models:
                model.base_url = broken_url
                model.save()
            response = post(Client(), "/api/battles", {"prompt": "hello"})
        finally:
            broken.stop()
        assert response.status_code == 502
        detail = response.json()["detail"]
        assert "failed" in detail and "/retry" in detail
        assert broken_url not in detail
        assert Battle.objects.count() == 1


def _start_session(client: Client) -> str:
    session = client.session
    session["visitor"] = True
    session.save()
    client.cookies["sessionid"] = session.session_key
    return session.session_key


@pytest.mark.django_db
def test_the_page_says_clearly_when_fewer_than_two_models_can_battle(client):
    page = client.get("/battle/")
    assert page.status_code == 200
    assert services.NOT_ENOUGH_MODELS in page.content.decode()
    created = client.post("/battle/", {"prompt": "hello"})
    assert created.status_code == 503
    assert services.NOT_ENOUGH_MODELS in created.content.decode()

"""The JSON API of regenerate and share (battles.api.share)."""

from __future__ import annotations

import itertools
import json

import pytest
from django.test import Client

from battles import services, sharing
from battles.api.battles import NOT_FOUND
from battles.api.share import SHARE_LINK_NOT_FOUND
from battles.models import Response, SupersededAnswer
from battles.tests.conftest import assert_blind
from battles.tests.factories import answered_battle, vote_on

UNKNOWN = "00000000-0000-4000-8000-000000000000"


def post(client: Client, url: str, payload: dict | None = None):
    return client.post(url, data=json.dumps(payload or {}), content_type="application/json")


def owner_client() -> tuple[Client, str]:
    client = Client()
    session = client.session
    session["visitor"] = True
    session.save()
    return client, session.session_key


@pytest.mark.django_db(transaction=True)
def test_regenerate_answers_with_new_answers_in_the_turn_shape_and_stays_blind(
        celery_worker, two_models, fake_openai):
    takes = itertools.count(1)
    fake_openai.reply_text = lambda rec: f"Take {next(takes)}: an answer of a few words."
    client = Client()
    created = post(client, "/api/battles", {"prompt": "Say something."})
    assert created.status_code == 200, created.content
    battle_id = created.json()["battle_id"]

    again = post(client, f"/api/battles/{battle_id}/regenerate")
    assert again.status_code == 200, again.content
    body = again.json()
    assert set(body) == {"battle_id", "message_id", "responses", "session_id"}
    assert body["message_id"] == created.json()["message_id"]  # the same message, answered anew
    old = {r["position"]: r["text"] for r in created.json()["responses"]}
    new = {r["position"]: r["text"] for r in body["responses"]}
    assert set(new) == {"left", "right"} and all(r["latency_ms"] is None
                                                 for r in body["responses"])
    assert set(old.values()).isdisjoint(new.values())
    assert_blind(again.content.decode() + json.dumps(dict(again.headers)), fake_openai.base_url)
    shown = client.get(f"/api/battles/{battle_id}").json()["messages"][0]["responses"]
    assert {r["position"]: r["text"] for r in shown} == new
    assert set(SupersededAnswer.objects.values_list("text", flat=True)) == set(old.values())

    voted = post(client, f"/api/battles/{battle_id}/vote", {"vote": "right_better"})
    assert voted.status_code == 200
    refused = post(client, f"/api/battles/{battle_id}/regenerate")
    assert refused.status_code == 409
    assert refused.json() == {"detail": services.BATTLE_ALREADY_VOTED}


@pytest.mark.django_db
class TestRegenerateErrors:
    def test_unknown_or_someone_elses_battle_is_404(self):
        client, _ = owner_client()
        other = answered_battle(session_key="someone-else")
        for battle_id in (UNKNOWN, str(other.id), "not-a-uuid"):
            answer = post(client, f"/api/battles/{battle_id}/regenerate")
            assert answer.status_code == 404
            assert answer.json() == {"detail": NOT_FOUND}

    def test_answers_still_being_written_are_409(self):
        client, key = owner_client()
        battle = answered_battle(session_key=key)
        Response.objects.filter(turn__battle=battle).update(status="running")
        answer = post(client, f"/api/battles/{battle.id}/regenerate")
        assert answer.status_code == 409
        assert answer.json() == {"detail": services.REGENERATE_WHILE_WRITING}

    def test_past_the_limit_is_409(self, settings):
        settings.ARENA_BATTLE_REGENERATIONS = 1
        client, key = owner_client()
        battle = answered_battle(session_key=key)
        battle.turns.update(regenerations=1)
        answer = post(client, f"/api/battles/{battle.id}/regenerate")
        assert answer.status_code == 409
        assert answer.json() == {"detail": services.REGENERATE_LIMIT.format(limit=1, plural="")}


@pytest.mark.django_db
class TestShareApi:
    def test_an_unvoted_battle_is_409_and_nobody_elses_is_shared(self):
        client, key = owner_client()
        battle = answered_battle(session_key=key)
        answer = post(client, f"/api/battles/{battle.id}/share")
        assert answer.status_code == 409
        assert answer.json() == {"detail": sharing.SHARE_NOT_VOTED}
        vote_on(battle, choice="tie")
        stranger, _ = owner_client()
        assert post(stranger, f"/api/battles/{battle.id}/share").status_code == 404
        assert post(client, f"/api/battles/{UNKNOWN}/share").json() == {"detail": NOT_FOUND}

    def test_share_read_revoke(self):
        client, key = owner_client()
        battle = answered_battle(session_key=key, prompt="Two plus two?", title="Two plus two?")
        vote_on(battle, choice="left_better")
        shared = post(client, f"/api/battles/{battle.id}/share")
        assert shared.status_code == 200
        body = shared.json()
        token = body["url"].rstrip("/").rsplit("/", 1)[-1]
        assert body == {"battle_id": str(battle.id),
                        "url": f"http://testserver/battle/shared/{token}/",
                        "image_url": f"http://testserver/battle/shared/{token}/card.png"}
        assert post(client, f"/api/battles/{battle.id}/share").json() == body  # pressed twice

        public = Client().get(f"/api/shares/{token}")  # a visitor with no session at all
        assert public.status_code == 200
        data = public.json()
        assert data["url"] == body["url"] and data["image_url"] == body["image_url"]
        assert data["vote"] == "left_better" and data["title"] == "Two plus two?"
        left = battle.model_a if battle.model_a_position == "left" else battle.model_b
        assert data["revealed_models"]["left"]["model_id"] == left.slug
        assert data["messages"][0]["prompt"] == "Two plus two?"
        assert {r["text"] for r in data["messages"][0]["responses"]} == {"answer a1",
                                                                         "answer b1"}
        assert str(battle.id) not in public.content.decode()
        card = Client().get(body["image_url"])
        assert card.status_code == 200 and card["Content-Type"] == "image/png"

        revoked = client.delete(f"/api/battles/{battle.id}/share")
        assert revoked.status_code == 204
        assert Client().get(f"/api/shares/{token}").json() == {"detail": SHARE_LINK_NOT_FOUND}
        assert Client().get(body["image_url"]).status_code == 404
        again = client.delete(f"/api/battles/{battle.id}/share")
        assert again.status_code == 404
        assert again.json() == {"detail": sharing.SHARE_NOT_FOUND}

    def test_the_operations_are_documented(self):
        paths = Client().get("/api/openapi.json").json()["paths"]
        share = paths["/api/battles/{battle_id}/share"]
        assert set(share["post"]["responses"]) >= {"200", "404", "409"}
        assert set(share["delete"]["responses"]) >= {"204", "404"}
        assert set(paths["/api/battles/{battle_id}/regenerate"]["post"]["responses"]) >= {
            "200", "404", "409"}
        assert set(paths["/api/shares/{token}"]["get"]["responses"]) >= {"200", "404"}

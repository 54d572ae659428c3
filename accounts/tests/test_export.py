"""GET /me/export and GET /api/me/export: everything tied to the person, as one JSON file."""

from __future__ import annotations

import json

import pytest
from allauth.socialaccount.models import SocialAccount

from accounts.models import ApiToken
from accounts.tests.me_support import PROMPT, signed_in_client, something_in_every_mode
from accounts.tokens import token_create

pytestmark = pytest.mark.django_db


def test_the_export_is_a_json_download_of_everything_tied_to_the_person():
    user, client, key = signed_in_client()
    made = something_in_every_mode(key)
    _row, token = token_create(user=user, name="laptop")
    SocialAccount.objects.create(user=user, provider="github", uid="583231")
    answer = client.get("/me/export")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("application/json")
    assert answer["Content-Disposition"].startswith('attachment; filename="arena-export-')
    data = json.loads(answer.content)
    account = data["account"]
    assert account["email"] == "ada@example.com"
    assert [(p["provider"], p["uid"]) for p in account["provider_accounts"]] == [
        ("github", "583231")]
    assert [e["email"] for e in account["email_addresses"]] == ["ada@example.com"]
    assert len(data["sign_ins"]) == 1
    battles = {b["id"]: b for b in data["battles"]}
    assert battles[str(made["battle"].pk)]["turns"][0]["prompt"] == PROMPT
    assert battles[str(made["battle"].pk)]["turns"][0]["answers"]["a"] == "answer a1"
    assert battles[str(made["unvoted"].pk)]["models"] is None  # still blind
    assert [v["battle_id"] for v in data["votes"]["text"]] == [str(made["battle"].pk)]
    assert data["votes"]["debate"][0]["wager"] == 50 and data["debate_points"] == 950
    voice = data["voice_battles"][0]
    assert voice["id"] == str(made["voice"].pk)
    assert voice["conversations"][0]["turns"][0]["text"] == "Book me a haircut at ten."
    assert [t["name"] for t in data["tokens"]] == ["laptop"]
    text = answer.content.decode()
    digest = ApiToken.objects.get(user=user).digest
    assert digest not in text and token not in text
    assert key not in text  # the account's key is a credential of sorts: never exported
    assert client.get("/api/me/export").json()["battles"] == json.loads(
        json.dumps(data["battles"]))


def test_the_export_holds_nothing_of_anyone_else():
    _bob, _c, bob_key = signed_in_client("bob@example.com")
    something_in_every_mode(bob_key)
    _user, client, _key = signed_in_client()
    data = client.get("/api/me/export").json()
    assert data["battles"] == [] and data["votes"] == {"text": [], "debate": [], "voice": []}
    assert data["voice_battles"] == [] and data["debate_points"] == 1000

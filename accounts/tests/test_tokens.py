"""API tokens: made, listed and revoked by their person, stored only as a digest."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.api import SIGN_IN_FIRST, TOKEN_NOT_FOUND
from accounts.models import ApiToken
from accounts.tests.support import person, sign_in
from accounts.tokens import (
    MAX_ACTIVE_TOKENS,
    NAME_EMPTY,
    TOKEN_PREFIX,
    TokenRefused,
    token_create,
    token_list,
    token_resolve,
    token_revoke,
)

pytestmark = pytest.mark.django_db


def post(client: Client, url: str, payload: dict, **headers):
    return client.post(url, json.dumps(payload), content_type="application/json", **headers)


def every_stored_value() -> str:
    """Every column of every token row, as the database holds them."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {ApiToken._meta.db_table}")
        return repr(cursor.fetchall())


def test_the_database_never_holds_the_token_only_its_sha256():
    user = person()
    token, secret = token_create(user, "nightly script")
    assert secret.startswith(TOKEN_PREFIX) and len(secret) > len(TOKEN_PREFIX) + 40
    assert secret not in every_stored_value()
    assert secret[len(TOKEN_PREFIX):] not in every_stored_value()
    assert token.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret.startswith(token.prefix) and len(token.prefix) < 16
    assert token_resolve(secret) == token


def test_two_tokens_are_never_the_same():
    user = person()
    secrets = {token_create(user, f"script {n}")[1] for n in range(20)}
    assert len(secrets) == 20


def test_resolving_notes_the_last_use_at_most_once_a_minute():
    token, secret = token_create(person(), "script")
    assert token.last_used_at is None
    token_resolve(secret)
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    assert first is not None
    token_resolve(secret)
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    token_resolve(secret)
    assert ApiToken.objects.get(pk=token.pk).last_used_at > first - timedelta(minutes=1)


def test_revoked_unknown_and_inactive_tokens_resolve_to_nobody():
    user = person()
    token, secret = token_create(user, "script")
    assert token_resolve(secret + "x") is None
    assert token_resolve("not-even-ours") is None
    other, other_secret = token_create(user, "other")
    user.is_active = False
    user.save()
    assert token_resolve(other_secret) is None
    user.is_active = True
    user.save()
    assert token_revoke(user, token.pk) is True
    assert token_resolve(secret) is None
    assert token_revoke(user, token.pk) is False  # once
    assert list(token_list(user)) == [other]


def test_a_person_cannot_revoke_another_persons_token():
    ada, bob = person(), person("bob@example.com")
    token, secret = token_create(ada, "ada's")
    assert token_revoke(bob, token.pk) is False
    assert token_revoke(bob, "not a uuid") is False
    assert token_resolve(secret) == token


def test_a_name_is_required_and_tokens_are_not_unlimited():
    user = person()
    with pytest.raises(TokenRefused) as empty:
        token_create(user=user, name="   ")
    assert empty.value.message == NAME_EMPTY and empty.value.status == 400
    # The profile's form catches a ValueError and shows its text.
    assert isinstance(empty.value, ValueError) and str(empty.value) == NAME_EMPTY
    with pytest.raises(TokenRefused) as long:
        token_create(user, "x" * 81)
    assert long.value.status == 422
    ApiToken.objects.bulk_create(
        ApiToken(user=user, name=f"t{n}", prefix="arena_x", digest=f"{n:064d}")
        for n in range(MAX_ACTIVE_TOKENS))
    with pytest.raises(TokenRefused) as too_many:
        token_create(user, "one more")
    assert too_many.value.status == 409
    ApiToken.objects.filter(user=user).update(revoked_at=timezone.now())
    assert token_create(user, "one more")[0].name == "one more"


class TestTheApi:
    def test_a_signed_in_person_creates_lists_and_revokes_tokens(self):
        person()
        client = Client()
        sign_in(client)
        created = post(client, "/api/tokens", {"name": "eval script"})
        assert created.status_code == 201, created.content
        body = created.json()
        assert set(body) == {"id", "name", "prefix", "created_at", "last_used_at", "token"}
        assert body["name"] == "eval script" and body["token"].startswith(body["prefix"])
        listed = client.get("/api/tokens").json()["tokens"]
        assert [t["id"] for t in listed] == [body["id"]]
        assert body["token"] not in json.dumps(listed) and "token" not in listed[0]
        assert client.delete(f"/api/tokens/{body['id']}").status_code == 204
        assert client.get("/api/tokens").json()["tokens"] == []
        gone = client.delete(f"/api/tokens/{body['id']}")
        assert gone.status_code == 404 and gone.json()["detail"] == TOKEN_NOT_FOUND

    def test_a_token_manages_its_persons_tokens(self):
        user = person()
        _, secret = token_create(user, "admin script")
        bearer = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
        made = post(Client(), "/api/tokens", {"name": "child"}, **bearer)
        assert made.status_code == 201
        names = [t["name"] for t in Client().get("/api/tokens", **bearer).json()["tokens"]]
        assert names == ["child", "admin script"]

    def test_another_persons_token_id_is_not_found(self):
        person()
        bob = person("bob@example.com")
        bobs, _ = token_create(bob, "bob's")
        client = Client()
        sign_in(client)
        assert client.delete(f"/api/tokens/{bobs.pk}").status_code == 404
        assert client.delete("/api/tokens/not-a-uuid").status_code == 404
        assert ApiToken.objects.get(pk=bobs.pk).revoked_at is None

    @pytest.mark.parametrize("method,url", [("get", "/api/tokens"), ("post", "/api/tokens"),
                                            ("delete", "/api/tokens/x")])
    def test_an_anonymous_visitor_is_told_to_sign_in(self, method, url):
        client = Client()
        answer = (post(client, url, {"name": "x"}) if method == "post"
                  else getattr(client, method)(url))
        assert answer.status_code == 401
        assert answer.json() == {"detail": SIGN_IN_FIRST}
        assert answer["WWW-Authenticate"] == 'Bearer realm="arena"'
        assert not ApiToken.objects.exists()

    def test_an_empty_name_is_a_clear_400_and_creates_nothing(self):
        person()
        client = Client()
        sign_in(client)
        answer = post(client, "/api/tokens", {"name": " "})
        assert answer.status_code == 400 and answer.json() == {"detail": NAME_EMPTY}
        assert post(client, "/api/tokens", {}).status_code == 422
        assert not ApiToken.objects.exists()

    def test_the_openapi_schema_documents_the_tokens_and_bearer(self):
        schema = Client().get("/api/openapi.json").json()
        paths = schema["paths"]
        assert set(paths["/api/tokens"]["post"]["responses"]) >= {"201", "401", "403", "415"}
        assert set(paths["/api/tokens"]["get"]["responses"]) >= {"200", "401"}
        assert set(paths["/api/tokens/{token_id}"]["delete"]["responses"]) >= {"204", "401",
                                                                             "404"}
        schemes = schema["components"]["securitySchemes"]
        assert {"type": "http", "scheme": "bearer"}.items() <= schemes["ApiTokenBearer"].items()
        # Any operation may answer an unknown token 401 and a visitor past the hour's 429.
        assert {"401", "429"} <= set(paths["/api/battles"]["post"]["responses"])
        assert {"401", "429"} <= set(paths["/api/models"]["get"]["responses"])

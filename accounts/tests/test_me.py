"""The profile page (/me/) and GET /api/me: a person's own contests, votes, points, tokens."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import ApiToken
from accounts.selectors import profile_view
from accounts.tests.me_support import signed_in_client, something_in_every_mode
from accounts.tests.support import person
from accounts.tokens import token_create
from arena.errors import RuleError

pytestmark = pytest.mark.django_db


def test_an_anonymous_visitor_is_sent_to_sign_in_and_the_api_answers_401():
    client = Client()
    answer = client.get("/me/")
    assert answer.status_code == 302
    assert answer["Location"] == "/accounts/login/?next=/me/"
    for path in ("/api/me", "/api/me/leaderboard", "/api/me/export"):
        api = client.get(path)
        assert api.status_code == 401, path
        assert "Sign in" in api.json()["detail"]
    assert client.delete("/api/me").status_code == 401


def test_the_profile_lists_what_the_person_did_in_every_mode():
    user, client, key = signed_in_client()
    made = something_in_every_mode(key)
    token_create(user=user, name="my notebook")
    data = client.get("/api/me").json()
    assert data["account"]["email"] == "ada@example.com"
    assert {b["id"] for b in data["battles"]} == {str(made["battle"].pk), str(made["unvoted"].pk)}
    assert data["sessions"]["total"] == 2
    assert [d["debate_id"] for d in data["votes"]["debate"]] == [str(made["debate"].pk)]
    assert data["wagers"][0]["wager"] == 50
    assert data["points"] == 1000 - 50
    assert [v["id"] for v in data["voice_battles"]] == [str(made["voice"].pk)]
    assert [v["battle_id"] for v in data["votes"]["text"]] == [str(made["battle"].pk)]
    assert [t["name"] for t in data["tokens"]] == ["my notebook"]
    assert "digest" not in data["tokens"][0]
    page = client.get("/me/")
    assert page.status_code == 200
    html = page.content.decode()
    for shown in ("my notebook", made["debate"].topic.motion[:30], "Sign out everywhere",
                  'action="/accounts/sign-out-everywhere/"', 'href="/me/export"'):
        assert shown in html, shown


def test_a_blind_battle_names_no_model_on_the_profile():
    _user, client, key = signed_in_client()
    made = something_in_every_mode(key)
    rows = {b["id"]: b for b in client.get("/api/me").json()["battles"]}
    assert rows[str(made["unvoted"].pk)]["models"] is None
    unvoted_models = {made["unvoted"].model_a_id, made["unvoted"].model_b_id}
    assert not any(m in client.get("/me/").content.decode() for m in unvoted_models)
    assert rows[str(made["battle"].pk)]["models"] == [made["battle"].model_a_id,
                                                      made["battle"].model_b_id]


def test_someone_elses_rows_are_not_on_my_profile():
    _other, _c, other_key = signed_in_client("bob@example.com")
    something_in_every_mode(other_key)
    me = person("ada@example.com")
    view = profile_view(user=me)
    assert view.battles == [] and view.votes["text"] == [] and view.voice_battles == []


def test_a_token_is_made_shown_once_listed_by_its_prefix_and_revoked_on_the_page():
    user, client, _key = signed_in_client()
    made = client.post("/me/tokens/", {"name": "ci"})
    assert made.status_code == 201
    row = ApiToken.objects.get(user=user)
    token = made.context["new_token"]
    assert token.startswith(row.prefix) and token not in row.digest
    again = client.get("/me/").content.decode()
    assert token not in again and row.prefix in again
    assert client.post(f"/me/tokens/{row.pk}/revoke").status_code == 302
    row.refresh_from_db()
    assert row.revoked_at is not None
    assert client.post(f"/me/tokens/{row.pk}/revoke").status_code == 404


def test_a_token_without_a_name_is_refused_and_nothing_is_made():
    user, client, _key = signed_in_client()
    answer = client.post("/me/tokens/", {"name": "  "})
    assert answer.status_code == 400
    assert not ApiToken.objects.filter(user=user).exists()


def test_someone_elses_token_cannot_be_revoked():
    other = person("bob@example.com")
    row, _token = token_create(user=other, name="bob's")
    _user, client, _key = signed_in_client()
    assert client.post(f"/me/tokens/{row.pk}/revoke").status_code == 404
    row.refresh_from_db()
    assert row.revoked_at is None


def test_an_api_token_stands_for_its_account():
    from django.contrib.auth.models import AnonymousUser
    from django.test import RequestFactory

    from accounts.me_api import signed_in

    user, _client, key = signed_in_client()
    request = RequestFactory().get("/api/me")
    request.user = AnonymousUser()
    request.arena_account_key = key  # what the tokens' authentication sets
    assert signed_in(request) == user
    request.arena_account_key = "not-an-account"
    with pytest.raises(RuleError):
        signed_in(request)

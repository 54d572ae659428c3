"""Tokens and the hourly allowance under daphne, where the middleware runs on the event loop
and checks the token in a database thread (the test client runs them synchronously)."""

from __future__ import annotations

import httpx

from accounts.models import Profile
from accounts.tests.support import person
from accounts.tokens import token_create
from battles.tests.factories import answered_battle
from testkit.live import daphne_server


def test_a_token_acts_as_its_person_and_is_counted_as_them_under_daphne(transactional_db,
                                                                        test_process_env):
    user = person()
    _, secret = token_create(user, "script")
    answered_battle(session_key=Profile.objects.create(user=user).visitor_key)
    env = {**test_process_env, "ARENA_ANON_REQUESTS_PER_HOUR": "1",
           "ARENA_PERSON_REQUESTS_PER_HOUR": "3"}
    auth = {"Authorization": f"Bearer {secret}"}
    with daphne_server(env) as base_url, httpx.Client(base_url=base_url) as client:
        unknown = client.get("/api/sessions", headers={"Authorization": "Bearer arena_nope"})
        mine = [client.get("/api/sessions", headers=auth) for _ in range(3)]
        made = client.post("/api/tokens", json={"name": "from elsewhere"},
                           headers={**auth, "Origin": "https://ci.example.org"})
        anonymous = [client.get("/api/sessions").status_code for _ in range(2)]
    assert unknown.status_code == 401
    assert unknown.headers["WWW-Authenticate"] == 'Bearer realm="arena", error="invalid_token"'
    assert [r.status_code for r in mine] == [200] * 3
    assert {r.json()["total"] for r in mine} == {1}
    assert made.status_code == 429 and int(made.headers["Retry-After"]) >= 1  # the 4th
    assert anonymous == [200, 429]  # the address's own allowance, untouched by the person

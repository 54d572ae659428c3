"""Seed 001's own API paths beside the arena's: ``POST /api/sessions`` with a prompt (the
session and its first battle in one call), the visitor's ``user_id`` and
``GET /api/sessions/user/{user_id}``, ``GET /api/battles/session/{sid}`` in lmarena-clone's
shape, and ``POST /api/votes``. Blind until the vote, nobody else's, and refused in words."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client

from arena.api_writes import CROSS_SITE_WRITE
from arena.contests.voting import INVALID_VOTE
from battles import services
from battles.api.sessions import SESSION_NOT_FOUND, USER_NOT_FOUND
from battles.models import Battle, Thread, Vote
from battles.tests.conftest import assert_blind
from battles.tests.factories import ThreadFactory, answered_battle
from battles.users import user_id_of
from testkit.visitors import visitor_session_key

pytestmark = pytest.mark.django_db(transaction=True)


def _post(client: Client, path: str, payload: dict | None = None, **headers):
    return client.post(path, json.dumps(payload or {}), content_type="application/json",
                       headers=headers)


@pytest.fixture
def visitor() -> tuple[Client, str]:
    """A visitor with a session the server issued."""
    key = visitor_session_key()
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = key
    return client, key


def _own_battle(key: str, **fields) -> Battle:
    return answered_battle(session_key=key, thread__session_key=key, **fields)


class TestSessionWithFirstBattle:
    def test_a_prompt_opens_the_session_and_its_first_battle_in_one_call(
            self, celery_worker, two_models, fake_openai):
        client = Client()
        created = _post(client, "/api/sessions", {"prompt": "Name a   river."})
        assert created.status_code == 201, created.content
        body = created.json()
        battle = Battle.objects.get()
        assert (body["session_id"], body["battle_id"]) == (str(battle.thread_id), str(battle.id))
        assert body["message_id"] == str(battle.turns.get().id)
        assert [r["position"] for r in body["responses"]] == ["left", "right"]
        assert all("Name a   river." in r["text"] for r in body["responses"])
        assert all(r["latency_ms"] is None for r in body["responses"])
        assert (body["title"], body["battle_count"]) == ("Name a river.", 1)
        key = client.cookies[settings.SESSION_COOKIE_NAME].value
        assert body["user_id"] == user_id_of(session_key=key)
        assert_blind(created.content.decode() + json.dumps(dict(created.headers)),
                     fake_openai.base_url)
        # The session is the visitor's, listed with its battle.
        listed = client.get(f"/api/battles/session/{body['session_id']}").json()
        assert [b["battle_id"] for b in listed["battles"]] == [body["battle_id"]]

    def test_a_title_names_the_session_its_prompt_does_not_rename(self, celery_worker,
                                                                  two_models):
        created = _post(Client(), "/api/sessions", {"title": "Rivers", "prompt": "Longest?"})
        assert created.status_code == 201, created.content
        assert created.json()["title"] == "Rivers"
        assert Thread.objects.get().title == "Rivers"
        assert Battle.objects.get().title == "Longest?"

    def test_without_a_prompt_it_stays_an_empty_session(self, two_models, visitor):
        client, key = visitor
        created = _post(client, "/api/sessions", {"title": "Later"})
        assert created.status_code == 201
        body = created.json()
        assert (body["battle_id"], body["message_id"], body["responses"]) == (None, None, [])
        assert (body["battle_count"], body["user_id"]) == (0, user_id_of(session_key=key))
        assert Battle.objects.count() == 0 and Thread.objects.count() == 1

    @pytest.mark.parametrize(("prompt", "status", "detail"), [
        ("", 400, services.PROMPT_EMPTY),
        ("   \n ", 400, services.PROMPT_EMPTY),
        ("x" * 101, 422, services.PROMPT_TOO_LONG.format(limit=100, length=101)),
    ])
    def test_a_bad_prompt_is_refused_and_creates_no_session(self, two_models, visitor, settings,
                                                            prompt, status, detail):
        settings.ARENA_PROMPT_MAX_CHARS = 100
        client, _ = visitor
        answer = _post(client, "/api/sessions", {"title": "Kept?", "prompt": prompt})
        assert answer.status_code == status and answer.json() == {"detail": detail}
        assert Thread.objects.count() == 0 and Battle.objects.count() == 0

    def test_a_title_too_long_is_refused_before_any_model_is_asked(self, two_models, visitor,
                                                                   fake_openai):
        client, _ = visitor
        answer = _post(client, "/api/sessions", {"title": "t" * 121, "prompt": "Hi?"})
        assert answer.status_code == 422
        assert answer.json() == {"detail": services.TITLE_TOO_LONG.format(limit=120,
                                                                          length=121)}
        assert Thread.objects.count() == 0 and fake_openai.requests == []

    def test_without_two_models_it_is_a_503_and_creates_nothing(self, visitor):
        client, _ = visitor
        answer = _post(client, "/api/sessions", {"prompt": "Anyone there?"})
        assert answer.status_code == 503
        assert answer.json() == {"detail": services.NOT_ENOUGH_MODELS}
        assert Thread.objects.count() == 0

    def test_a_prompt_counts_as_a_new_battle_against_the_limit(self, celery_worker,
                                                               two_models, settings):
        settings.ARENA_BATTLES_PER_MINUTE = 1
        client = Client()
        assert _post(client, "/api/sessions", {"prompt": "One?"}).status_code == 201
        again = _post(client, "/api/sessions", {"prompt": "Two?"})
        assert again.status_code == 429 and "Too many requests" in again.json()["detail"]
        assert 1 <= int(again["Retry-After"]) <= 60
        assert Thread.objects.count() == 1


class TestUserId:
    def test_the_callers_user_id_lists_their_own_sessions(self, two_models, visitor):
        client, key = visitor
        created = _post(client, "/api/sessions", {"title": "Mine"}).json()
        _post(Client(), "/api/sessions", {"title": "Someone else's"})
        listed = client.get("/api/sessions").json()
        assert listed["user_id"] == created["user_id"] == user_id_of(session_key=key)
        by_user = client.get(f"/api/sessions/user/{listed['user_id']}")
        assert by_user.status_code == 200
        assert by_user.json() == listed
        assert [s["title"] for s in listed["sessions"]] == ["Mine"]
        assert listed["total"] == listed["count"] == 1
        paged = client.get(f"/api/sessions/user/{listed['user_id']}?limit=1&offset=1").json()
        assert (paged["sessions"], paged["total"], paged["offset"]) == ([], 1, 1)

    def test_another_visitors_user_id_finds_nothing(self, two_models, visitor):
        client, key = visitor
        _post(client, "/api/sessions", {"title": "Private"})
        theirs = user_id_of(session_key=key)
        stranger = Client()
        _post(stranger, "/api/sessions", {"title": "Stranger's"})
        for who in (stranger, Client()):
            answer = who.get(f"/api/sessions/user/{theirs}")
            assert answer.status_code == 404 and answer.json() == {"detail": USER_NOT_FOUND}
            assert "Private" not in answer.content.decode()

    @pytest.mark.parametrize("user_id", ["x", "0" * 32, "é" * 40, "a" * 5000])
    def test_a_made_up_user_id_is_not_found(self, visitor, user_id):
        client, _ = visitor
        answer = client.get(f"/api/sessions/user/{user_id}")
        assert answer.status_code == 404 and answer.json() == {"detail": USER_NOT_FOUND}

    def test_the_user_id_is_keyed_and_tells_nothing_of_the_session(self, settings):
        key = visitor_session_key()
        user_id = user_id_of(session_key=key)
        assert len(user_id) == 32 and key not in user_id and user_id not in key
        assert user_id != user_id_of(session_key=visitor_session_key())
        settings.SECRET_KEY = "another secret of another server " * 2
        assert user_id_of(session_key=key) != user_id

    def test_a_visitor_without_a_session_has_no_user_id_and_gets_none(self):
        answer = Client().get("/api/sessions")
        assert answer.json()["user_id"] is None
        assert Client().get("/api/sessions/user/None").status_code == 404
        assert Thread.objects.count() == 0

    def test_a_planted_session_cookie_is_no_session_and_no_user_id(self, two_models):
        client = Client()
        planted = "p" * 32
        client.cookies[settings.SESSION_COOKIE_NAME] = planted
        assert client.get("/api/sessions").json()["user_id"] is None
        assert client.get(f"/api/sessions/user/{user_id_of(session_key=planted)}"
                          ).status_code == 404
        created = _post(client, "/api/sessions", {"title": "New"}).json()
        assert created["user_id"] != user_id_of(session_key=planted)
        assert Thread.objects.get().session_key != planted


class TestSessionBattles:
    def test_each_battle_is_in_the_seeds_shape_and_blind_until_its_vote(self, visitor,
                                                                        fake_openai):
        client, key = visitor
        thread = ThreadFactory(session_key=key)
        voted = _own_battle(key, thread=thread, turns=2, prompt="First?")
        open_ = _own_battle(key, thread=thread, prompt="Second?")
        _post(client, f"/api/battles/{voted.pk}/vote", {"vote": "left_better"})
        answer = client.get(f"/api/battles/session/{thread.pk}")
        assert answer.status_code == 200
        body = answer.json()
        assert body["session_id"] == str(thread.pk)
        first, second = body["battles"]
        assert (first["battle_id"], second["battle_id"]) == (str(voted.pk), str(open_.pk))
        assert (first["status"], first["vote"]) == ("voted", "left_better")
        assert (first["left_model_id"], first["right_model_id"]) == (
            voted.model_a.slug, voted.model_b.slug)
        assert [(m["role"], m["content"], m["position"]) for m in first["conversation"]] == [
            ("user", "First?", None), ("assistant", "answer a1", "left"),
            ("assistant", "answer b1", "right"), ("user", "prompt 2", None),
            ("assistant", "answer a2", "left"), ("assistant", "answer b2", "right")]
        assert first["conversation"][1]["model_id"] == voted.model_a.slug
        assert first["conversation"][1]["latency_ms"] == 120
        assert (second["status"], second["vote"]) == ("ongoing", None)
        assert (second["left_model_id"], second["right_model_id"]) == (None, None)
        answers = [m for m in second["conversation"] if m["role"] == "assistant"]
        assert [(m["status"], m["model_id"], m["latency_ms"]) for m in answers] == [
            ("done", None, None), ("done", None, None)]
        for model in (open_.model_a, open_.model_b):
            for term in (model.slug, model.name, model.organization):
                assert term not in json.dumps(second)

    def test_nobody_else_reaches_a_session_and_a_bad_id_is_not_found(self, visitor):
        client, key = visitor
        battle = _own_battle(key)
        stranger = Client()
        stranger.cookies[settings.SESSION_COOKIE_NAME] = visitor_session_key()
        for who, sid in ((stranger, battle.thread_id), (Client(), battle.thread_id),
                         (client, "not-a-uuid"), (client, battle.pk),
                         (client, "00000000-0000-0000-0000-000000000000")):
            answer = who.get(f"/api/battles/session/{sid}")
            assert answer.status_code == 404 and answer.json() == {"detail": SESSION_NOT_FOUND}


class TestVotes:
    def test_a_vote_reveals_the_models_as_the_battles_own_vote_path_does(self, visitor):
        client, key = visitor
        battle = _own_battle(key)
        answer = _post(client, "/api/votes", {"battle_id": str(battle.pk), "vote": "tie"})
        assert answer.status_code == 200, answer.content
        assert answer.json() == {"battle_id": str(battle.pk), "vote": "tie",
                                 "revealed_models": {"left": battle.model_a.slug,
                                                     "right": battle.model_b.slug}}
        vote = Vote.objects.get(battle=battle)
        assert (vote.choice, vote.session_key) == ("tie", key)

    def test_a_second_vote_by_either_path_is_a_409(self, visitor):
        client, key = visitor
        battle = _own_battle(key)
        assert _post(client, f"/api/battles/{battle.pk}/vote", {"vote": "tie"}).status_code == 200
        again = _post(client, "/api/votes", {"battle_id": str(battle.pk),
                                             "vote": "left_better"})
        assert again.status_code == 409
        assert again.json() == {"detail": services.BATTLE_ALREADY_VOTED}
        assert Vote.objects.get(battle=battle).choice == "tie"

    @pytest.mark.parametrize("battle_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000",
                                           "theirs"])
    def test_an_unknown_or_someone_elses_battle_is_a_404(self, visitor, battle_id):
        client, _ = visitor
        theirs = answered_battle(session_key="someone-else", thread__session_key="someone-else")
        battle_id = str(theirs.pk) if battle_id == "theirs" else battle_id
        answer = _post(client, "/api/votes", {"battle_id": battle_id, "vote": "tie"})
        assert answer.status_code == 404
        assert answer.json() == {"detail": services.BATTLE_NOT_FOUND}
        assert Vote.objects.count() == 0

    def test_a_vote_before_both_answers_is_refused(self, visitor):
        client, key = visitor
        battle = _own_battle(key)
        battle.turns.get().responses.filter(slot="b").update(status="running")
        answer = _post(client, "/api/votes", {"battle_id": str(battle.pk), "vote": "tie"})
        assert answer.status_code == 409
        assert answer.json() == {"detail": services.ANSWERS_NOT_READY}

    @pytest.mark.parametrize(("payload", "status", "detail"), [
        ({"vote": "left"}, 422, INVALID_VOTE),
        ({"vote": ""}, 422, INVALID_VOTE),
        ({}, 422, "vote"),
        ({"vote": "tie", "battle_id": None}, 422, "battle_id"),
    ])
    def test_a_bad_body_is_refused_in_words(self, visitor, payload, status, detail):
        client, key = visitor
        battle = _own_battle(key)
        answer = _post(client, "/api/votes", {"battle_id": str(battle.pk), **payload})
        assert answer.status_code == status
        assert detail in answer.json()["detail"]
        assert Vote.objects.count() == 0

    def test_a_missing_battle_id_is_named(self, visitor):
        client, _ = visitor
        answer = _post(client, "/api/votes", {"vote": "tie"})
        assert answer.status_code == 422 and "battle_id" in answer.json()["detail"]


class TestWritesComeFromTheSite:
    @pytest.fixture
    def browser_of_visitor(self, two_models) -> tuple[Client, Battle]:
        """A visitor whose browser sends their cookie to whatever page asks, and their
        battle."""
        key = visitor_session_key()
        client = Client(enforce_csrf_checks=True)
        client.cookies[settings.SESSION_COOKIE_NAME] = key
        return client, _own_battle(key)

    def test_a_vote_from_another_origin_changes_nothing(self, browser_of_visitor):
        client, battle = browser_of_visitor
        body = {"battle_id": str(battle.pk), "vote": "tie"}
        for headers in ({"Origin": "http://evil.example"}, {}):
            answer = _post(client, "/api/votes", body, **headers)
            assert answer.status_code == 403 and answer.json() == {"detail": CROSS_SITE_WRITE}
        assert Vote.objects.count() == 0
        assert _post(client, "/api/votes", body, Origin="http://testserver").status_code == 200

    def test_a_session_with_a_prompt_from_another_origin_is_not_started(
            self, browser_of_visitor, fake_openai):
        client, _ = browser_of_visitor
        answer = _post(client, "/api/sessions", {"prompt": "From elsewhere?"},
                       Origin="http://evil.example")
        assert answer.status_code == 403 and answer.json() == {"detail": CROSS_SITE_WRITE}
        assert Thread.objects.count() == 1 and Battle.objects.count() == 1
        assert fake_openai.requests == []

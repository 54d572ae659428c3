"""The session API of seed 001: a visitor's threads of battles, each battle blind until its own
vote, and nobody else's sessions visible. Battles are answered by a real Celery worker and the
fake OpenAI-compatible provider."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client

from battles import services
from battles.api.sessions import SESSION_NOT_FOUND
from battles.models import Battle, Thread
from battles.tests.conftest import assert_blind

pytestmark = pytest.mark.django_db(transaction=True)


def _post(client: Client, path: str, payload: dict | None = None):
    return client.post(path, json.dumps(payload or {}), content_type="application/json")


@pytest.fixture
def visitor() -> Client:
    return Client()


@pytest.fixture
def session_with_two_battles(celery_worker, two_models, visitor):
    """A session of the visitor: battle 1 voted, battle 2 not yet; (client, session id,
    battle ids)."""
    created = _post(visitor, "/api/sessions")
    assert created.status_code == 201, created.content
    session_id = created.json()["session_id"]
    first = _post(visitor, f"/api/sessions/{session_id}/battles", {"prompt": "Name a river."})
    assert first.status_code == 200, first.content
    voted = _post(visitor, f"/api/battles/{first.json()['battle_id']}/vote", {"vote": "tie"})
    assert voted.status_code == 200, voted.content
    second = _post(visitor, f"/api/sessions/{session_id}/battles", {"prompt": "Name a lake."})
    assert second.status_code == 200, second.content
    return visitor, session_id, [first.json()["battle_id"], second.json()["battle_id"]]


def test_a_new_session_is_empty_and_its_first_prompt_names_it(session_with_two_battles):
    client, session_id, battle_ids = session_with_two_battles
    session = client.get(f"/api/sessions/{session_id}")
    assert session.status_code == 200
    body = session.json()
    assert body["title"] == "Name a river."
    assert body["battle_count"] == 2
    assert [b["battle_id"] for b in body["battles"]] == battle_ids
    assert [b["status"] for b in body["battles"]] == ["voted", "open"]
    assert all(b["session_id"] == session_id for b in body["battles"])
    assert {str(b.thread_id) for b in Battle.objects.filter(pk__in=battle_ids)} == {session_id}


def test_each_battle_of_a_session_is_blind_until_its_own_vote(session_with_two_battles,
                                                               fake_openai, two_models):
    client, session_id, battle_ids = session_with_two_battles
    answer = client.get(f"/api/sessions/{session_id}/battles")
    assert answer.status_code == 200
    voted, open_ = answer.json()["battles"]
    assert voted["battle_id"] == battle_ids[0] and voted["vote"] == "tie"
    assert {m["model_id"] for m in voted["revealed_models"].values()} == {
        m.slug for m in two_models}
    assert open_["battle_id"] == battle_ids[1] and open_["revealed_models"] is None
    assert [r["text"] for r in open_["messages"][0]["responses"]] != ["", ""]
    assert_blind(json.dumps(open_), fake_openai.base_url)
    # The summaries and the list name nobody either, voted or not.
    assert_blind(client.get(f"/api/sessions/{session_id}").content.decode(),
                 fake_openai.base_url)
    assert_blind(client.get("/api/sessions").content.decode(), fake_openai.base_url)


def test_the_list_is_the_callers_own_latest_first_a_page_at_a_time(celery_worker, two_models,
                                                                     visitor):
    ids = [_post(visitor, "/api/sessions", {"title": f"  Topic   {n} "}).json()["session_id"]
           for n in range(3)]
    _post(Client(), "/api/sessions", {"title": "Someone else's"})
    # Activity moves a session to the top.
    battle = _post(visitor, f"/api/sessions/{ids[0]}/battles", {"prompt": "Hello?"})
    assert battle.status_code == 200, battle.content

    first_page = visitor.get("/api/sessions?limit=2").json()
    assert (first_page["count"], first_page["limit"], first_page["offset"]) == (3, 2, 0)
    assert [s["session_id"] for s in first_page["sessions"]] == [ids[0], ids[2]]
    assert first_page["sessions"][0]["title"] == "Topic 0"  # named: the prompt did not rename
    assert first_page["sessions"][0]["battle_count"] == 1
    rest = visitor.get("/api/sessions?limit=2&offset=2").json()
    assert [s["session_id"] for s in rest["sessions"]] == [ids[1]]
    assert Client().get("/api/sessions").json() == {"user_id": None, "sessions": [],
                                                    "count": 0, "total": 0, "limit": 20,
                                                    "offset": 0}
    bad = visitor.get("/api/sessions?limit=0")
    assert bad.status_code == 422 and "limit" in bad.json()["detail"]


def test_a_battle_without_a_session_opens_one_of_its_own(celery_worker, two_models, visitor):
    answers = [_post(visitor, "/api/battles", {"prompt": p}) for p in ("One?", "Two?")]
    sessions = {a.json()["session_id"] for a in answers}
    assert len(sessions) == 2
    listed = visitor.get("/api/sessions").json()
    assert {s["session_id"] for s in listed["sessions"]} == sessions
    assert {s["title"] for s in listed["sessions"]} == {"One?", "Two?"}


def test_nobody_else_reaches_a_session(session_with_two_battles, two_models):
    _, session_id, _ = session_with_two_battles
    stranger = Client()
    for path in (f"/api/sessions/{session_id}", f"/api/sessions/{session_id}/battles"):
        answer = stranger.get(path)
        assert answer.status_code == 404 and answer.json() == {"detail": SESSION_NOT_FOUND}
    joined = _post(stranger, f"/api/sessions/{session_id}/battles", {"prompt": "Mine now?"})
    assert joined.status_code == 404 and joined.json() == {"detail": SESSION_NOT_FOUND}
    assert Battle.objects.filter(thread_id=session_id).count() == 2
    for unknown in ("not-a-uuid", "00000000-0000-0000-0000-000000000000"):
        assert stranger.get(f"/api/sessions/{unknown}").status_code == 404


def test_bad_input_is_refused_in_words_and_creates_nothing(two_models, visitor):
    long_title = _post(visitor, "/api/sessions", {"title": "x" * 121})
    assert long_title.status_code == 422
    assert long_title.json() == {"detail": services.TITLE_TOO_LONG.format(limit=120, length=121)}
    session_id = _post(visitor, "/api/sessions").json()["session_id"]
    empty = _post(visitor, f"/api/sessions/{session_id}/battles", {"prompt": "   "})
    assert empty.status_code == 400 and empty.json() == {"detail": services.PROMPT_EMPTY}
    missing = _post(visitor, f"/api/sessions/{session_id}/battles", {})
    assert missing.status_code == 422 and "prompt" in missing.json()["detail"]
    assert Thread.objects.count() == 1 and Battle.objects.count() == 0
    cookie = visitor.cookies[settings.SESSION_COOKIE_NAME].value
    assert Thread.objects.get().session_key == cookie


def test_a_model_is_described_by_its_id(two_models):
    alpha, _ = two_models
    answer = Client().get(f"/api/models/{alpha.slug}")
    assert answer.status_code == 200
    body = answer.json()
    assert (body["model_id"], body["name"], body["organization"]) == (
        alpha.slug, alpha.name, alpha.organization)
    assert body["available"] is True and body["max_tokens"] == alpha.max_tokens
    assert "api_key_env" not in body and "base_url" not in body
    unknown = Client().get("/api/models/no-such-model")
    assert unknown.status_code == 404 and unknown.json() == {"detail": "Model not found."}

"""Stop: the person ends the answers being written; each keeps what it had written.

Against a real Celery worker and a fake provider that streams slowly: the stop is seen by the
worker, which hangs up on the provider, and nothing it does afterwards changes the answer.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client

from arena.steps import StepStatus
from arena.streaming import read_snapshot
from battles import services
from battles.models import Response
from battles.tests.conftest import assert_blind
from battles.tests.factories import answered_battle, vote_on
from testkit.waiting import wait_for

LONG_REPLY = " ".join(f"word{i}" for i in range(200))


def _session(client: Client, key: str | None = None) -> str:
    """The visitor of ``client`` (a new one, or the one whose session key is given)."""
    if key is None:
        session = client.session
        session["visitor"] = True
        session.save()
        key = session.session_key
    client.cookies[settings.SESSION_COOKIE_NAME] = key
    return key


def _streaming(turn) -> bool:
    """Both answers are running and each has sent some text."""
    from arena import aio

    responses = list(Response.objects.filter(turn=turn))
    return all(r.status == StepStatus.RUNNING for r in responses) and all(
        (snap := aio.run(read_snapshot(str(r.id)))) and snap["text"] for r in responses)


@pytest.fixture
def slow(two_models, fake_openai):
    fake_openai.reply_text = LONG_REPLY
    fake_openai.token_delay = 0.05  # 200 tokens: ten seconds per answer
    for model in two_models:
        model.max_tokens = 400
        model.save(update_fields=["max_tokens"])
    return two_models


@pytest.mark.django_db(transaction=True)
def test_stop_keeps_what_was_written_and_the_worker_hangs_up(celery_worker, slow, fake_openai):
    client = Client()
    key = _session(client)
    battle, turn = services.battle_create(session_key=key, prompt="Write at length.")
    wait_for(lambda: _streaming(turn), what="both answers streaming")

    answer = client.post(f"/api/battles/{battle.id}/stop", content_type="application/json")

    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert [r["stopped"] for r in body["responses"]] == [True, True]
    for side in body["responses"]:
        assert side["text"] and LONG_REPLY.startswith(side["text"].strip())
        assert len(side["text"]) < len(LONG_REPLY)
    assert_blind(answer.content.decode(), fake_openai.base_url)
    # The worker saw the stop at its next chunk and closed both provider streams early.
    wait_for(lambda: len(fake_openai.abandoned) == 2, what="both provider streams closed")
    assert all(sent < 200 for _, sent in fake_openai.abandoned)
    saved = {str(r.id): r for r in Response.objects.filter(turn=turn)}
    assert all(r.status == StepStatus.DONE and r.stopped for r in saved.values())
    # What each cost until the stop: time since its claim, tokens estimated from its text.
    assert all(r.latency_ms and r.latency_ms > 0 and r.output_tokens > 0
               for r in saved.values())
    assert sorted(r.text for r in saved.values()) == sorted(s["text"] for s in body["responses"])
    # The battle goes on: the person can vote on what was written.
    voted = client.post(f"/api/battles/{battle.id}/vote", {"vote": "tie"},
                        content_type="application/json")
    assert voted.status_code == 200, voted.content


@pytest.mark.django_db(transaction=True)
def test_a_waiting_api_call_is_answered_when_another_request_stops_the_battle(
        celery_worker, slow, fake_openai):
    """POST /api/battles waits for both answers; a stop from elsewhere ends that wait."""
    import threading

    client = Client()
    key = _session(client)
    first: dict = {}

    def create():
        first["answer"] = client.post("/api/battles", {"prompt": "Write at length."},
                                      content_type="application/json")

    thread = threading.Thread(target=create)
    thread.start()
    turn = wait_for(lambda: (r := Response.objects.select_related("turn").first()) and r.turn,
                    what="the battle to exist")
    wait_for(lambda: _streaming(turn), what="both answers streaming")
    other_tab = Client()
    _session(other_tab, key)
    stopped = other_tab.post(f"/api/battles/{turn.battle_id}/stop",
                              content_type="application/json")
    thread.join(timeout=60)
    assert stopped.status_code == 200
    answer = first["answer"]
    assert answer.status_code == 200, answer.content
    assert [r["stopped"] for r in answer.json()["responses"]] == [True, True]
    wait_for(lambda: len(fake_openai.abandoned) == 2, what="both provider streams closed")


@pytest.mark.django_db
def test_a_battle_not_yet_started_stops_with_no_text_and_its_job_does_nothing(
        two_models, django_capture_on_commit_callbacks, monkeypatch):
    import arena.steps
    from battles.steps import response_run

    monkeypatch.setattr(arena.steps, "send_task", lambda name, args: None)
    battle, turn = services.battle_create(session_key="owner", prompt="Hello?")
    services.battle_stop(battle=battle)
    for response in Response.objects.filter(turn=turn):
        assert (response.status, response.stopped, response.text) == (StepStatus.DONE, True, "")
        assert response.generation == 1
        assert (response.latency_ms, response.output_tokens) == (None, 0)  # never started
        response_run(response_id=str(response.pk), generation=0)  # the queued job wakes
        response.refresh_from_db()
        assert response.status == StepStatus.DONE and response.text == ""


@pytest.mark.django_db
def test_stop_refuses_in_words_when_there_is_nothing_to_stop(two_models):
    client = Client()
    key = _session(client)
    battle = answered_battle(session_key=key)
    done = client.post(f"/api/battles/{battle.id}/stop", content_type="application/json")
    assert done.status_code == 409
    assert done.json() == {"detail": services.NOTHING_TO_STOP}
    vote_on(battle, choice="tie")
    voted = client.post(f"/api/battles/{battle.id}/stop", content_type="application/json")
    assert voted.status_code == 409
    assert voted.json() == {"detail": services.BATTLE_ALREADY_VOTED}
    stranger = Client().post(f"/api/battles/{battle.id}/stop", content_type="application/json")
    assert stranger.status_code == 404
    assert json.loads(stranger.content) == {"detail": "Battle not found."}

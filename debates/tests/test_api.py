"""The debate JSON API and pages' server side, through a real worker and the fake provider."""

import json

import pytest
from django.test import Client

from debates.models import Debate
from debates.tests.debate_support import (
    DebateScript,
    library,
    make_model,
    quiet_rating_runs,
    wait_debate,
    wait_for,
    worker_idle,
)


@pytest.fixture
def api_setup(celery_worker, fake_openai, settings, monkeypatch):
    quiet_rating_runs(monkeypatch)
    fake_openai.reply_text = DebateScript()
    for slug in ("alpha-7b", "beta-3b", "gamma-1b"):
        make_model(fake_openai, slug)
    settings.ARENA_DEBATE_JUDGE_MODEL = "gamma-1b"
    topic, first, second = library()
    yield topic, first, second
    wait_for(worker_idle)


def post(client, url, payload):
    return client.post(url, data=json.dumps(payload), content_type="application/json")


def run(client, topic, **extra):
    payload = {"model_a": "alpha-7b", "model_b": "beta-3b", "topic_id": str(topic.pk),
               "rounds": 1, "word_limit": 60, **extra}
    response = post(client, "/api/debate/run", payload)
    assert response.status_code == 200, response.content
    return response.json()["debate_id"]


class TestRunAndRead:
    def test_run_then_get_the_transcript_checks_and_verdict_blind_until_the_vote(
            self, api_setup):
        topic, *_ = api_setup
        client = Client()
        debate_id = run(client, topic)
        wait_debate(debate_id)
        data = client.get(f"/api/debates/{debate_id}").json()
        assert data["status"] == "completed" and data["motion"] == topic.motion
        assert [(t["round"], t["position"]) for t in data["transcript"]] == [(1, "pro"),
                                                                             (1, "con")]
        assert data["transcript"][0]["fact_checks"][0]["verdict"] == "verified"
        assert {e["order"] for e in data["evaluations"]} == {"pro_first", "con_first"}
        assert data["ai_winner"] == "pro" and data["judge"] is None
        assert all(s["model_id"] is None and s["model_name"] is None for s in data["sides"])
        body = json.dumps(data)
        for secret in ("alpha", "beta", "gamma", "Alpha", "Beta", "Gamma"):
            assert secret not in body
        # The creator chose the models, so their own vote would not count: a viewer votes.
        assert data["chosen"] is True
        viewer = Client()
        voted = post(viewer, "/api/debate/vote", {"debate_id": debate_id, "choice": "con"})
        assert voted.status_code == 200, voted.content
        assert {s["model_id"] for s in voted.json()["sides"]} == {"alpha-7b", "beta-3b"}
        again = post(viewer, "/api/debate/vote", {"debate_id": debate_id, "choice": "pro"})
        assert again.status_code == 409 and "already voted" in again.json()["detail"]
        data = viewer.get(f"/api/debates/{debate_id}").json()
        assert data["your_vote"] == "con" and data["crowd"] == {"pro": 0, "con": 1, "tie": 0}
        assert data["crowd_winner"] == "con" and data["judge"] == "Gamma Model"

    def test_the_list_and_its_filters(self, api_setup):
        topic, *_ = api_setup
        client = Client()
        debate_id = run(client, topic, fact_checking=False)
        unlisted = run(client, topic, fact_checking=False, listed=False)
        wait_debate(debate_id)
        wait_debate(unlisted)
        listed = client.get("/api/debates").json()["debates"]
        assert [d["debate_id"] for d in listed] == [debate_id]
        assert listed[0]["category"] == "Environment"
        assert client.get("/api/debates?category=Philosophy").json()["debates"] == []
        # A model filter matches only debates this viewer voted on: the others stay blind.
        assert client.get("/api/debates?model=alpha-7b").json()["debates"] == []
        post(client, "/api/debate/vote", {"debate_id": debate_id, "choice": "tie"})
        found = client.get("/api/debates?model=alpha-7b").json()["debates"]
        assert [d["debate_id"] for d in found] == [debate_id]
        assert client.get(f"/api/debates/{unlisted}").status_code == 200  # by its link

    def test_a_written_motion_is_listed_only_when_its_author_says_so(self, api_setup):
        client = Client()
        motion = "This house would make every museum free to enter."
        quiet = post(client, "/api/debate/run", {"motion": motion, "fact_checking": False,
                                                 "rounds": 1})
        loud = post(client, "/api/debate/run", {"motion": motion + " Now.", "rounds": 1,
                                                "fact_checking": False, "listed": True})
        assert quiet.status_code == loud.status_code == 200, (quiet.content, loud.content)
        for response in (quiet, loud):
            wait_debate(response.json()["debate_id"])
        listed = [d["debate_id"] for d in client.get("/api/debates").json()["debates"]]
        assert listed == [loud.json()["debate_id"]]

    def test_pause_resume_cancel_over_the_api(self, api_setup):
        topic, *_ = api_setup
        owner, stranger = Client(), Client()
        debate_id = run(owner, topic, rounds=2, fact_checking=False)
        assert post(stranger, f"/api/debates/{debate_id}/pause", {}).status_code == 403
        paused = post(owner, f"/api/debates/{debate_id}/pause", {})
        assert paused.status_code == 200 and paused.json()["status"] == "paused"
        assert post(owner, f"/api/debates/{debate_id}/pause", {}).status_code == 409
        wait_for(worker_idle)
        resumed = post(owner, f"/api/debates/{debate_id}/resume", {})
        assert resumed.status_code == 200 and resumed.json()["status"] == "in_progress"
        cancelled = post(owner, f"/api/debates/{debate_id}/cancel", {})
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        assert "Cancelled" in cancelled.json()["error"]
        wait_for(worker_idle)


class TestErrors:
    @pytest.mark.parametrize(("payload", "status", "detail"), [
        ({"rounds": 0, "word_limit": 9999}, 400,
         "rounds must be 1 to 5 (got 0); word_limit must be 50 to 500 (got 9999)"),
        ({"model_a": "nope"}, 400, "model_a 'nope' is not a known model"),
        ({"model_a": "alpha-7b", "model_b": "alpha-7b"}, 400, "two different models"),
        ({"topic_id": "not-a-uuid"}, 400, "is not an open topic"),
        ({"motion": "Too short"}, 400, "at least 4 words"),
        ({"motion": " ".join(["word"] * 41)}, 400, "at most 40 words"),
        ({"rounds": "many"}, 422, ""),
    ])
    def test_bad_configurations(self, api_setup, payload, status, detail):
        response = post(Client(), "/api/debate/run", payload)
        assert response.status_code == status, response.content
        assert detail in response.json()["detail"] if isinstance(
            response.json()["detail"], str) else True
        assert not Debate.objects.exists()

    def test_an_empty_library_is_a_503_that_says_what_to_do(self, api_setup):
        from debates.models import Persona

        Persona.objects.update(is_active=False)
        response = post(Client(), "/api/debate/run", {})
        assert response.status_code == 503 and "load_debate_library" in response.json()[
            "detail"]
        assert not Debate.objects.exists()

    def test_unknown_debates_and_votes(self, api_setup):
        client = Client()
        assert client.get("/api/debates/00000000-0000-0000-0000-000000000000").status_code == 404
        assert client.get("/api/debates/junk").status_code == 404
        response = post(client, "/api/debate/vote", {"debate_id": "junk", "choice": "pro"})
        assert response.status_code == 404
        assert post(client, "/api/debates/junk/pause", {}).status_code == 404

    def test_debates_per_hour_are_limited_with_retry_after(self, api_setup, settings):
        topic, *_ = api_setup
        settings.ARENA_DEBATES_PER_HOUR = 1
        client = Client()
        debate_id = run(client, topic, fact_checking=False)
        response = post(client, "/api/debate/run", {"topic_id": str(topic.pk)})
        assert response.status_code == 429 and int(response["Retry-After"]) > 0
        assert "per hour" in response.json()["detail"]
        wait_debate(debate_id)

    def test_the_daily_spend_cap_refuses_new_debates(self, api_setup, settings):
        topic, *_ = api_setup
        settings.ARENA_DEBATE_DAILY_SPEND_USD = 0.5
        client = Client()
        debate_id = run(client, topic, fact_checking=False)
        wait_debate(debate_id)
        Debate.objects.filter(pk=debate_id).update(cost_a=0.6)
        response = post(client, "/api/debate/run", {"model_a": "alpha-7b",
                                                   "model_b": "beta-3b"})
        assert response.status_code == 429 and "budget for today" in response.json()["detail"]


class TestPages:
    def test_the_pages_are_blind_until_the_vote_and_the_owner_controls(self, api_setup):
        topic, first, second = api_setup
        owner = Client()
        owner.get("/debates/")
        response = owner.post("/debates/new/", {
            "model_a": "alpha-7b", "model_b": "beta-3b", "topic": str(topic.pk),
            "persona_a": str(first.pk), "persona_b": str(second.pk), "rounds": "2",
            "word_limit": "60"})
        assert response.status_code == 302
        debate = Debate.objects.get()
        assert response["Location"] == f"/debates/{debate.pk}/"
        paused = owner.post(f"/debates/{debate.pk}/pause/", HTTP_HX_REQUEST="true")
        assert paused.status_code == 200 and 'data-status="paused"' in paused.content.decode()
        stranger = Client()
        refused = stranger.post(f"/debates/{debate.pk}/resume/", HTTP_HX_REQUEST="true")
        assert refused.status_code == 403 and "Only the person who started" in \
            refused.content.decode()
        wait_for(worker_idle)
        owner.post(f"/debates/{debate.pk}/resume/")
        wait_debate(debate.pk)
        for client in (owner, stranger):
            page = client.get(f"/debates/{debate.pk}/").content.decode()
            assert "Model hidden until you vote" in page
            for name in ("Alpha Model", "Beta Model", "Gamma Model", "alpha-7b"):
                assert name not in page
        voted = stranger.post(f"/debates/{debate.pk}/vote/", {"choice": "con", "wager": "0"},
                              HTTP_HX_REQUEST="true").content.decode()
        assert "You voted <strong>CON</strong>" in voted and "Alpha Model" in voted
        listing = stranger.get("/debates/").content.decode()
        assert topic.motion in listing and "Alpha Model" not in listing.split(
            'data-testid="debate-list"')[1]
        assert owner.post(f"/debates/{debate.pk}/nonsense/").status_code == 404
        assert owner.get("/debates/00000000-0000-0000-0000-000000000000/").status_code == 404

"""The panel JSON API and the page's server side, through a real worker and the fakes."""

import json

import pytest
from django.test import Client

from panels.models import Panel, PanelStatus, RoundPhase
from panels.tests.panel_support import (
    failing,
    panel_setup,
    wait_finished,
    wait_for,
    worker_idle,
)


@pytest.fixture
def panel_models(celery_worker, fake_openai, fake_anthropic, settings, monkeypatch):
    yield panel_setup(fake_openai, fake_anthropic, settings, monkeypatch)
    wait_for(worker_idle)  # nothing may touch the database while it is flushed


def post(client, url, payload):
    return client.post(url, data=json.dumps(payload), content_type="application/json")


class TestApi:
    def test_run_answers_with_the_id_and_get_shows_the_verdict(self, panel_models):
        client = Client()
        response = post(client, "/api/panel/run", {"question": "What is 2+2?"})
        assert response.status_code == 200, response.content
        assert set(response.json()) == {"panel_id"}
        panel_id = response.json()["panel_id"]
        wait_finished(panel_id)
        data = client.get(f"/api/panel/{panel_id}").json()
        assert data["status"] == "done" and data["error"] is None
        assert data["progress"] == {"answers_done": 3, "answers_total": 3,
                                    "judgements_done": 3, "judgements_total": 3}
        assert len(data["answers"]) == 3 and "**four**" in data["answers"][0]["text"]
        assert all(r["valid"] and r["self_rank"] for r in data["rankings"])
        standings = data["verdict"]["standings"]
        assert [s["model_id"] for s in standings] == ["alpha-7b", "beta-3b", "gamma-1b"]
        assert standings[0]["average_rank"] == 1.0 and data["verdict"]["kendall_w"] == 1.0
        assert data["verdict"]["standings_without_self_votes"][0]["judges"] == 2

    def test_a_subset_and_the_list(self, panel_models):
        client = Client()
        response = post(client, "/api/panel/run",
                        {"question": "Name a prime.", "models": ["alpha-7b", "beta-3b"]})
        panel_id = response.json()["panel_id"]
        wait_finished(panel_id)
        data = client.get(f"/api/panel/{panel_id}").json()
        assert [a["model_id"] for a in data["answers"]] == ["alpha-7b", "beta-3b"]
        listed = client.get("/api/panels").json()["panels"]
        assert listed[0]["panel_id"] == panel_id and listed[0]["answers"] == 2
        assert listed[0]["public"] is False

    def test_a_question_is_listed_only_to_its_asker_unless_made_public(self, panel_models):
        asker, public_asker, stranger = Client(), Client(), Client()
        private = post(asker, "/api/panel/run", {"question": "My private worry?"}).json()
        shared = post(public_asker, "/api/panel/run",
                      {"question": "Which prime is even?", "public": True}).json()
        for panel in (private, shared):
            wait_finished(panel["panel_id"])

        def listed(client: Client) -> set[str]:
            return {p["question"] for p in client.get("/api/panels").json()["panels"]}

        assert listed(asker) == {"My private worry?", "Which prime is even?"}
        assert listed(stranger) == {"Which prime is even?"}
        assert "My private worry?" not in stranger.get("/panel/").content.decode()
        assert "Which prime is even?" in stranger.get("/panel/").content.decode()
        # The link still shows it to whoever has it.
        assert stranger.get(f"/api/panel/{private['panel_id']}").status_code == 200

    @pytest.mark.parametrize(("payload", "status", "detail"), [
        ({"question": ""}, 400, "Write a question first"),
        ({"question": "Hi", "models": ["alpha-7b", "nope"]}, 422, "Unknown model id(s): nope"),
        ({"question": "Hi", "models": ["alpha-7b"]}, 503, "at least two models"),
        ({"models": "alpha-7b"}, 422, "models"),
    ])
    def test_errors_are_json_details(self, panel_models, payload, status, detail):
        response = post(Client(), "/api/panel/run", payload)
        assert response.status_code == status
        assert detail in response.json()["detail"]

    @pytest.mark.parametrize("panel_id", ["00000000-0000-0000-0000-000000000000", "nope"])
    def test_unknown_panels_are_404(self, db, panel_id):
        response = Client().get(f"/api/panel/{panel_id}")
        assert response.status_code == 404 and response.json() == {"detail": "Panel not found."}

    def test_a_failed_panel_says_why(self, panel_models, fake_anthropic):
        failing(fake_anthropic)
        response = post(Client(), "/api/panel/run",
                        {"question": "Hi", "models": ["alpha-7b", "gamma-1b"]})
        panel_id = response.json()["panel_id"]
        wait_finished(panel_id)
        data = Client().get(f"/api/panel/{panel_id}").json()
        assert data["status"] == "failed" and data["verdict"] is None
        assert data["error"].startswith("Only 1 of 2 models answered")


class TestPages:
    def test_the_form_lists_models_and_saved_panels(self, panel_models):
        client = Client()
        page = client.get("/panel/")
        assert page.status_code == 200
        html = page.content.decode()
        for name in ("Alpha Model", "Beta Model", "Gamma Model", "Ask the panel",
                     "Generate a question", "No panels yet", "Let Alpha Model clarify"):
            assert name in html

    def test_without_a_question_model_clarifying_and_generating_are_off(self, panel_models,
                                                                        settings):
        settings.ARENA_PANEL_QUESTION_MODEL = "missing-model"
        html = Client().get("/panel/").content.decode()
        assert 'data-testid="clarify" disabled' in html
        assert 'data-testid="generate" disabled' in html
        assert "The question model missing-model is not available" in html

    def test_posting_starts_a_panel_and_its_page_follows_the_socket_until_done(
            self, panel_models):
        client = Client()
        response = client.post("/panel/", {"question": "What is 2+2?", "action": "ask"})
        assert response.status_code == 302
        panel = Panel.objects.get()
        assert response["Location"] == f"/panel/{panel.id}/"
        progress = client.get(f"/panel/{panel.id}/progress").content.decode()
        if not Panel.objects.get(pk=panel.id).is_finished:
            assert f'data-socket="/ws/panels/{panel.id}/"' in progress
        assert "hx-trigger" not in progress.split(">", 1)[0]  # never polls
        wait_finished(panel.id)
        progress = client.get(f"/panel/{panel.id}/progress").content.decode()
        assert "data-socket" not in progress.split(">", 1)[0]  # the live part ended
        page = client.get(f"/panel/{panel.id}/").content.decode()
        assert "Winner: <strong>Alpha Model</strong>" in page
        assert "<strong>four</strong>" in page  # the answers' Markdown, rendered
        assert "Kendall" in page and "Ranked itself" in page
        listing = client.get("/panel/").content.decode()
        assert f"/panel/{panel.id}/" in listing

    def test_htmx_post_redirects_the_client_and_errors_render_in_place(self, panel_models):
        client = Client()
        htmx = {"HTTP_HX_REQUEST": "true"}
        response = client.post("/panel/", {"question": "Hi", "action": "ask"}, **htmx)
        assert response.status_code == 200 and response["HX-Redirect"].startswith("/panel/")
        response = client.post("/panel/", {"question": "", "action": "ask"}, **htmx)
        assert response.status_code == 400
        assert "Write a question first" in response.content.decode()
        wait_finished(Panel.objects.get().id)

    def test_the_self_vote_switch_swaps_the_verdict(self, panel_models):
        client = Client()
        client.post("/panel/", {"question": "What is 2+2?", "action": "ask"})
        panel = wait_finished(Panel.objects.get().id)
        with_self = client.get(f"/panel/{panel.id}/verdict").content.decode()
        without = client.get(f"/panel/{panel.id}/verdict", {"exclude_self": "1"}).content.decode()
        assert "including each judge" in with_self and "checked" not in with_self
        assert "scored only by the others" in without and "checked" in without

    def test_clarification_through_the_page(self, panel_models):
        script, _ = panel_models
        script.clarify_replies = ["Which number system do you mean?"]
        script.refined = ["What is 2+2 in base ten?"]
        client = Client()
        client.post("/panel/", {"question": "What is 2+2?", "clarify": "on", "action": "ask"})
        panel = Panel.objects.get()
        wait_for(lambda: panel.rounds.filter(phase=RoundPhase.ASKING).exists())
        progress = client.get(f"/panel/{panel.id}/progress").content.decode()
        assert "Which number system do you mean?" in progress
        assert "hx-trigger" not in progress.split(">", 1)[0]  # no polling while the person types
        assert Client().get(f"/panel/{panel.id}/progress").content.decode().count(
            "clarify-answer") == 0  # only the asker gets the form
        response = client.post(f"/panel/{panel.id}/clarify",
                               {"answer": "Base ten", "action": "answer"}, HTTP_HX_REQUEST="true")
        assert response.status_code == 200
        panel = wait_finished(panel.id)
        assert panel.status == PanelStatus.DONE and panel.question == "What is 2+2 in base ten?"
        page = client.get(f"/panel/{panel.id}/").content.decode()
        assert "First asked as: What is 2+2?" in page and "Base ten" in page

"""GET /api/leaderboard, /api/leaderboard/stats, /api/worker/status; POST /api/worker/aggregate."""

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from arena.models import AIModel, ModelStatus
from leaderboard.models import RatingRun, RunTrigger
from leaderboard.pages.api import STAFF_ONLY
from leaderboard.runs import services

from .conftest import SMALL_BOARD
from .factories import make_votes

pytestmark = pytest.mark.django_db

def get(path, **params):
    response = Client().get(path, params)
    assert response.status_code == 200, response.content
    return response.json()


def names(payload):
    return [e["model_id"] for e in payload["leaderboard"]]


def test_a_busy_board_is_answered_from_the_web_processs_memory(transactional_db,
                                                               test_process_env):
    """With ARENA_LEADERBOARD_ANSWER_SECONDS the answer is public that long, and daphne
    repeats it without asking Django (arena.edge): a newer snapshot shows only to a request
    asking for a fresh answer, or once the time is up. The tests' own setting is 0."""
    from testkit.live import daphne_server

    make_votes(SMALL_BOARD)
    services.ratings_run(trigger=RunTrigger.COMMAND)
    env = {**test_process_env, "ARENA_LEADERBOARD_ANSWER_SECONDS": "60"}
    with daphne_server(env) as base_url, httpx.Client(base_url=base_url) as client:
        first = client.get("/api/leaderboard", params={"sort": "votes"})
        assert first.headers["cache-control"] == "public, max-age=60"
        make_votes([("alpha", "beta", "model_b", 4)])
        services.ratings_run(trigger=RunTrigger.COMMAND)  # a newer snapshot
        again = client.get("/api/leaderboard", params={"sort": "votes"})
        assert again.content == first.content
        assert "age" in again.headers and "age" not in first.headers
        fresh = client.get("/api/leaderboard", params={"sort": "votes"},
                           headers={"Cache-Control": "no-cache"})
    total = first.json()["metadata"]["total_votes"]
    assert fresh.json()["metadata"]["total_votes"] == total + 4


def test_the_tests_read_every_change_at_once(board):
    response = Client().get("/api/leaderboard")
    assert response.headers["Cache-Control"] == "no-cache"


def test_entries_carry_every_field_best_first(board):
    data = get("/api/leaderboard")
    assert names(data) == ["alpha", "beta", "gamma"]  # delta (2 votes) is provisional
    top = data["leaderboard"][0]
    assert set(top) >= {
        "rating",
        "ci_lower",
        "ci_upper",
        "rank_ub",
        "votes",
        "wins",
        "losses",
        "ties",
        "both_bad",
        "win_rate",
        "organization",
        "license",
        "elo",
    }
    assert top["votes"] == 43 and top["wins"] == 40 and top["both_bad"] == 3
    assert top["win_rate"] == pytest.approx(40 / 43)
    assert top["rank_ub"] == 1 and top["organization"] == "Acme"
    assert data["metadata"]["total_votes"] == 65 and data["metadata"]["last_updated"]


def test_provisional_models_only_on_request(board):
    data = get("/api/leaderboard", include_provisional="true")
    assert names(data)[-1] == "delta"
    assert data["leaderboard"][-1]["provisional"] and data["leaderboard"][-1]["rank_ub"] is None


def test_filters_sort_and_search(board):
    assert names(get("/api/leaderboard", organization="Acme")) == ["alpha", "beta"]
    assert names(get("/api/leaderboard", license="MIT")) == ["alpha", "gamma"]
    assert names(get("/api/leaderboard", search="AMM")) == ["gamma"]
    assert names(get("/api/leaderboard", sort="rating", order="asc")) == ["gamma", "beta", "alpha"]
    by_votes = get("/api/leaderboard", sort="votes")["leaderboard"]
    assert [e["votes"] for e in by_votes] == sorted((e["votes"] for e in by_votes), reverse=True)
    by_rate = get("/api/leaderboard", sort="win_rate", order="asc")["leaderboard"]
    assert [e["win_rate"] for e in by_rate] == sorted(e["win_rate"] for e in by_rate)


def test_deprecated_models_are_hidden_unless_asked(board):
    AIModel.objects.filter(slug="alpha").update(status=ModelStatus.DEPRECATED)
    services.ratings_run(trigger=RunTrigger.COMMAND)
    assert names(get("/api/leaderboard")) == ["beta", "gamma"]
    assert get("/api/leaderboard")["leaderboard"][0]["rank_ub"] == 1
    assert "alpha" in names(get("/api/leaderboard", include_deprecated="true"))


def test_bad_parameters_are_json_errors(board):
    response = Client().get("/api/leaderboard", {"sort": "shoe_size"})
    assert response.status_code == 422 and "shoe_size" in response.json()["detail"]
    response = Client().get("/api/leaderboard", {"board": "nope"})
    assert response.status_code == 404 and "nope" in response.json()["detail"]


def test_stats_count_battles_votes_models_and_the_last_run(board):
    make_votes([("alpha", "beta", "model_a", 2)], counts_for_rating=False)
    services.ratings_run(trigger=RunTrigger.COMMAND)
    data = get("/api/leaderboard/stats")
    assert data["total_battles"] == 67 and data["total_votes"] == 67
    assert data["boards"]["text"]["outcomes"] == 65
    assert data["total_models"] == 4 and data["boards"]["text"]["models_rated"] == 3
    assert data["last_run"]["status"] == "succeeded"


def test_worker_status_reports_runs(board):
    data = get("/api/worker/status")
    assert data["status"] == "succeeded" and data["votes_processed"] == 65
    assert data["runs"][0]["boards"] == ["text"]


def test_aggregate_is_refused_to_visitors_and_non_staff(board):
    visitor = Client().post("/api/worker/aggregate", content_type="application/json")
    assert visitor.status_code == 403
    user = get_user_model().objects.create_user("pat", password="pw-123456")
    client = Client()
    client.force_login(user)
    response = client.post("/api/worker/aggregate", content_type="application/json", data={})
    assert response.status_code == 403 and response.json()["detail"] == STAFF_ONLY
    assert RatingRun.objects.count() == 1


def test_aggregate_runs_for_staff(board):
    staff = get_user_model().objects.create_user("sam", password="pw-123456", is_staff=True)
    client = Client()
    client.force_login(staff)
    response = client.post(
        "/api/worker/aggregate", content_type="application/json", data={"board": "text"}
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "succeeded" and body["trigger"] == "api"
    assert body["outcomes_processed"] == 65
    assert RatingRun.objects.count() == 2


def test_aggregate_needs_the_csrf_token_for_a_session(board):
    staff = get_user_model().objects.create_user("sam", password="pw-123456", is_staff=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    assert client.post("/api/worker/aggregate").status_code == 403
    assert RatingRun.objects.count() == 1

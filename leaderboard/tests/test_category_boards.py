"""Category boards: every run fits one per category with enough votes; the page offers them
with their vote counts, the API serves them, and a model's page lists its category ratings."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from leaderboard.models import BoardSnapshot, RunTrigger
from leaderboard.runs import services

from .factories import make_votes

pytestmark = pytest.mark.django_db

CODING = [("alpha", "beta", "model_a", 14), ("beta", "gamma", "model_a", 9),
          ("gamma", "alpha", "tie", 4), ("alpha", "gamma", "model_b", 5)]
MATH = [("alpha", "beta", "model_b", 6)]
REST = [("alpha", "beta", "model_a", 10), ("beta", "gamma", "model_b", 8)]


@pytest.fixture
def categorised(settings):
    settings.ARENA_LEADERBOARD_CATEGORY_MIN_VOTES = 20
    make_votes(CODING, categories=("coding", "lang-en"))
    make_votes(MATH, categories=("math",))
    make_votes(REST)
    run = services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    assert run.status == "succeeded", run.error


def test_a_run_fits_each_category_with_enough_votes(categorised):
    whole = BoardSnapshot.objects.get(board="text", category="")
    assert whole.category_votes == {"coding": 32, "lang-en": 32, "math": 6}
    assert whole.outcomes == 32 + 6 + 18
    rated = set(BoardSnapshot.objects.exclude(category="").values_list("category", flat=True))
    assert rated == {"coding", "lang-en"}  # math has 6 votes, under 20
    coding = BoardSnapshot.objects.get(board="text", category="coding")
    assert coding.outcomes == 32 and coding.style_coefficients is None


def test_a_category_board_is_the_independent_fit_of_its_votes(categorised, tmp_path):
    out = tmp_path / "votes.csv"
    call_command("export_votes", "--output", str(out), stderr=io.StringIO())
    buffer = io.StringIO()
    call_command("rate", "--input", str(out), "--category", "coding", "--format", "json",
                 "--ci", "sandwich", stdout=buffer)
    independent = {r["model"]: r["rating"] for r in json.loads(buffer.getvalue())}
    board = {e.subject: e.rating
             for e in BoardSnapshot.objects.get(category="coding").entries.all()}
    assert board.keys() == independent.keys() == {"alpha", "beta", "gamma"}
    for model, rating in independent.items():
        assert board[model] == pytest.approx(rating, abs=0.05)
    with out.open() as handle:
        assert sum(r["coding"] == "true" for r in csv.DictReader(handle)) == 32


def test_the_api_serves_a_category_board_and_lists_every_category(categorised):
    body = Client().get("/api/leaderboard?board=text&category=coding").json()
    assert body["metadata"]["category"] == "coding"
    assert body["metadata"]["total_votes"] == 32
    categories = {c["name"]: c for c in body["metadata"]["categories"]}
    assert categories["coding"] == {"name": "coding", "title": "Coding", "votes": 32,
                                    "rated": True}
    assert categories["math"]["rated"] is False and categories["math"]["votes"] == 6
    assert all(e["elo"] is None for e in body["leaderboard"])  # no online Elo per category
    whole = Client().get("/api/leaderboard?board=text").json()["metadata"]
    assert whole["category"] is None and whole["total_votes"] == 56


def test_a_category_without_a_board_is_a_clear_error(categorised):
    response = Client().get("/api/leaderboard?board=text&category=math")
    assert response.status_code == 422
    message = response.json()["detail"]
    assert "at 20 counted votes" in message and "coding, lang-en" in message
    page = Client().get("/leaderboard/?board=text&category=nope")
    assert page.status_code == 400 and b"No text board for the category" in page.content


def test_the_page_offers_the_categories_with_their_votes(categorised):
    html = Client().get("/leaderboard/?board=text").content.decode()
    assert 'data-testid="category-coding"' in html and "Language: English" in html
    assert 'title="Needs 14 more votes for a board of its own"' in html  # math: 6 of 20
    chosen = Client().get("/leaderboard/?board=text&category=coding").content.decode()
    assert 'data-testid="vote-count">32<' in chosen
    assert 'name="category" value="coding"' in chosen  # the filters keep the category


def test_a_models_page_shows_its_category_ratings(categorised):
    html = Client().get("/models/alpha/").content.decode()
    assert 'data-category="coding"' in html and 'data-category="lang-en"' in html
    boards = Client().get("/api/models/alpha").json()["boards"]
    coding = [b for b in boards if b["category"] == "coding"]
    assert len(coding) == 1 and coding[0]["title"] == "Coding" and coding[0]["votes"] == 23

"""A model's page (/models/<id>/) and GET /api/models/{id}: card, standing on every board,
record against each opponent, public battles only."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from battles.tests.factories import BattleFactory
from leaderboard.models import BoardSnapshot, RunTrigger
from leaderboard.runs import services

from .factories import make_votes

pytestmark = pytest.mark.django_db

VOTES = [
    ("alpha", "beta", "model_a", 6),
    ("beta", "alpha", "model_a", 2),
    ("alpha", "gamma", "tie", 3),
    ("gamma", "alpha", "both_bad", 1),
    ("beta", "gamma", "model_b", 5),
]


@pytest.fixture
def rated():
    make_votes(VOTES)
    make_votes([("alpha", "beta", "model_a", 2)], is_demo=True)
    services.ratings_run(trigger=RunTrigger.COMMAND)
    # A battle of alpha's that nobody has voted on yet: still blind, never listed.
    from arena.models import AIModel

    BattleFactory(model_a=AIModel.objects.get(pk="alpha"), model_b=AIModel.objects.get(pk="beta"),
                  title="A still blind question")


def test_the_api_has_the_card_every_board_each_opponent_and_public_battles(rated):
    answer = Client().get("/api/models/alpha")
    assert answer.status_code == 200
    body = answer.json()
    assert (body["model_id"], body["name"]) == ("alpha", "Alpha")
    text = next(b for b in body["boards"] if b["board"] == "text")
    entry = BoardSnapshot.objects.filter(board="text").latest("created_at").entries.get(
        subject="alpha")
    assert text["rating"] == pytest.approx(entry.rating) and text["votes"] == entry.votes
    assert text["rated"] and text["rank_ub"] == entry.rank_ub
    record = {o["model_id"]: o for o in body["opponents"] if o["board"] == "text"}
    # Demo battles count on the board (8 + 2 against beta), as the ratings do.
    assert (record["beta"]["won"], record["beta"]["lost"], record["beta"]["votes"]) == (8, 2, 10)
    assert record["beta"]["win_rate"] == pytest.approx(0.8)
    assert (record["gamma"]["tie"], record["gamma"]["both_bad"], record["gamma"]["won"]) == (
        3, 1, 0)
    recent = body["recent_battles"]
    assert len(recent) == 10  # the latest ten public, non-demo battles
    assert {r["result"] for r in recent} <= {"won", "lost", "tie", "both bad"}
    assert all(r["url"].startswith("/battle/") for r in recent)
    assert "A still blind question" not in answer.content.decode()


def test_the_page_shows_the_same_and_every_board_row_links_to_it(rated):
    board = Client().get("/leaderboard/").content.decode()
    assert 'href="/models/alpha/"' in board and 'href="/models/gamma/"' in board
    page = Client().get("/models/alpha/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="model-card"' in html and "Alpha" in html
    assert 'data-board="text"' in html and 'data-opponent="beta"' in html
    assert "A still blind question" not in html
    assert len(re.findall(r'href="/battle/[0-9a-f-]{36}/"', html)) == 10


def test_an_unknown_model_is_a_404_in_words():
    assert Client().get("/models/no-such-model/").status_code == 404
    answer = Client().get("/api/models/no-such-model")
    assert answer.status_code == 404 and answer.json() == {"detail": "Model not found."}


def test_a_model_without_votes_has_a_page_saying_so():
    from arena.models import AIModel

    AIModel.objects.create(slug="fresh", name="Fresh", provider="p", api_model="fresh",
                           provider_kind="openai")
    html = Client().get("/models/fresh/").content.decode()
    assert "No public battles yet" in html and "Not rated on this board yet." in html

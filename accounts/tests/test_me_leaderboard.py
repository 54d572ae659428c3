"""A person's own leaderboard: Bradley–Terry on their counted text-battle votes, beside the
global text board's ranks, at 0, 1, 2 and many votes."""

from __future__ import annotations

import pytest
from django.test import override_settings

from accounts.leaderboard import personal_board
from accounts.tests.me_support import models, signed_in_client, voted_battle
from battles.models import Vote
from leaderboard.runs.services import board_recompute

pytestmark = pytest.mark.django_db


def test_no_vote_yet_gives_an_empty_board_that_says_what_is_needed():
    _user, client, _key = signed_in_client()
    data = client.get("/api/me/leaderboard").json()
    assert data["rows"] == [] and data["votes"] == 0
    assert "at least one" in data["empty_note"] and data["board"] == "text"
    page = client.get("/me/").content.decode()
    assert 'data-testid="me-leaderboard-empty"' in page


def test_one_vote_rates_both_models_as_provisional_with_intervals():
    _user, client, key = signed_in_client()
    a, b, _c = models()
    voted_battle(key, a, b, "left_better")
    rows = client.get("/api/me/leaderboard").json()["rows"]
    assert [r["model"] for r in rows] == [a.slug, b.slug]
    assert all(r["provisional"] and r["rank"] is None and r["votes"] == 1 for r in rows)
    assert rows[0]["rating"] > rows[1]["rating"]
    assert all(r["ci_lower"] < r["rating"] < r["ci_upper"] for r in rows)
    assert "provisional" in client.get("/me/").content.decode()


def test_two_votes_on_three_models_are_all_rated():
    _user, client, key = signed_in_client()
    a, b, c = models()
    voted_battle(key, a, b, "left_better")
    voted_battle(key, b, c, "tie")
    rows = client.get("/api/me/leaderboard").json()["rows"]
    assert [r["model"] for r in rows][0] == a.slug
    assert {r["model"]: r["votes"] for r in rows} == {a.slug: 1, b.slug: 2, c.slug: 1}


@override_settings(ARENA_LEADERBOARD_MIN_VOTES=2)
def test_my_ranks_stand_beside_the_global_ones_and_only_my_counted_votes_count():
    _user, _client, key = signed_in_client()
    a, b, _c = models()
    for _ in range(3):
        voted_battle(key, a, b, "right_better")
    for _ in range(4):
        voted_battle("someone-else", a, b, "left_better")
    excluded = voted_battle(key, a, b, "left_better")
    Vote.objects.filter(battle=excluded).update(counts_for_rating=False)
    board_recompute(board_name="text")
    board = personal_board(visitor_key=key)
    assert board.votes == 3
    mine = {r["model"]: r for r in board.rows}
    assert board.rows[0]["model"] == b.slug  # I prefer b; everyone else a
    assert mine[b.slug]["rank"] == 1 and not mine[b.slug]["provisional"]
    assert mine[a.slug]["global"]["rating"] > mine[b.slug]["global"]["rating"]
    assert mine[a.slug]["global"]["rank"] == 1


@override_settings(ARENA_LEADERBOARD_MIN_VOTES=2)
def test_ranked_models_come_before_provisional_ones():
    _user, _client, key = signed_in_client()
    a, b, c = models()
    voted_battle(key, a, b, "right_better")
    voted_battle(key, a, b, "right_better")
    voted_battle(key, c, b, "left_better")  # c: one vote, a win over the best model
    rows = personal_board(visitor_key=key).rows
    assert [r["model"] for r in rows] == [b.slug, a.slug, c.slug]
    assert [r["provisional"] for r in rows] == [False, False, True]

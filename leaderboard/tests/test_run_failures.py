"""A new arena's first votes rate, and a run that cannot rate a board says so everywhere
while the board keeps its last snapshot with its true age."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from battles.models import VoteChoice
from battles.tests.factories import BattleFactory, ResponseFactory, TurnFactory, vote_on
from leaderboard.boards import Board, get_board, register_board, unregister_board
from leaderboard.models import BoardSnapshot, RatingRun, RunStatus, RunTrigger
from leaderboard.runs import services

from .factories import make_votes

pytestmark = pytest.mark.django_db

LONG_MARKDOWN = "# Plan\n\n- **one**\n- two\n\n" + "A long and careful answer. " * 30


def _battle_voted(choice: str, *, left: str, right: str):
    battle = BattleFactory(model_a__slug="smol", model_b__slug="qwen", session_key="newcomer")
    turn = TurnFactory(battle=battle)
    ResponseFactory(turn=turn, slot="a", text=left, output_tokens=len(left.split()),
                    md_headers=left.count("#"), md_lists=left.count("\n- "),
                    md_bold=left.count("**") // 2)
    ResponseFactory(turn=turn, slot="b", text=right, output_tokens=len(right.split()),
                    md_headers=right.count("#"), md_lists=right.count("\n- "),
                    md_bold=right.count("**") // 2)
    return vote_on(battle, choice=choice)


def test_a_left_vote_and_a_tie_rate_the_text_board_with_style_control(settings):
    """The first hour's frozen board: these two votes failed every later run with
    LinAlgError: Singular matrix in style control."""
    _battle_voted(VoteChoice.LEFT_BETTER, left=LONG_MARKDOWN, right="Short.")
    _battle_voted(VoteChoice.TIE, left="A plain answer.", right=LONG_MARKDOWN)
    run = services.ratings_run(trigger=RunTrigger.VOTES, boards=["text"])
    assert run.status == RunStatus.SUCCEEDED, run.error
    snapshot = BoardSnapshot.objects.get(board="text")
    assert snapshot.outcomes == 2
    answer = Client().get("/api/leaderboard?board=text&style_control=true").json()
    coefficients = {c["element"]: c for c in answer["metadata"]["style_coefficients"]}
    assert set(coefficients) == {"tokens", "headers", "lists", "bold"}
    # Two votes cannot estimate a style effect: each element says why it was left out.
    assert not any(c["fitted"] for c in coefficients.values())
    assert all(c["note"].startswith("left out:") for c in coefficients.values())
    assert answer["metadata"]["failed_run"] is None
    page = Client().get("/leaderboard/?board=text&style=1").content.decode()
    assert page.count("left out:") == 4
    assert 'data-testid="run-failed"' not in page


@pytest.fixture
def flaky_board():
    """A board rated once, whose outcomes then cannot be read."""
    text = get_board("text")
    state = {"broken": False}

    def outcomes():
        if state["broken"]:
            raise RuntimeError("the outcomes table is on fire")
        return text.outcomes()

    register_board(Board(name="flaky", title="Flaky", outcomes=outcomes))
    yield state
    unregister_board("flaky")


def test_a_failed_run_keeps_the_last_snapshot_and_says_so_everywhere(flaky_board, caplog):
    make_votes([("alpha", "beta", "model_a", 6), ("beta", "alpha", "tie", 2)])
    first = services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text", "flaky"])
    assert first.status == RunStatus.SUCCEEDED, first.error
    old = BoardSnapshot.objects.get(board="flaky")
    an_hour_ago = timezone.now() - timedelta(hours=1)
    BoardSnapshot.objects.filter(pk=old.pk).update(created_at=an_hour_ago)
    RatingRun.objects.filter(pk=first.pk).update(started_at=an_hour_ago)

    flaky_board["broken"] = True
    make_votes([("alpha", "beta", "model_a", 3)])
    with caplog.at_level(logging.ERROR, logger="leaderboard.runs.services"):
        run = services.ratings_run(trigger=RunTrigger.VOTES, boards=["text", "flaky"])
    assert "the flaky board failed" in caplog.text and "on fire" in caplog.text
    assert run.status == RunStatus.FAILED and run.failed_boards == ["flaky"]
    # The other board was rated; the failing one kept its snapshot.
    assert BoardSnapshot.objects.filter(board="text").count() == 2
    assert list(BoardSnapshot.objects.filter(board="flaky")) == [old]

    client = Client()
    stats = client.get("/api/leaderboard/stats").json()
    assert stats["boards"]["flaky"]["failed_run"]["id"] == run.pk
    assert "on fire" in stats["boards"]["flaky"]["failed_run"]["error"]
    assert stats["boards"]["text"]["failed_run"] is None
    assert stats["last_run"]["failed_boards"] == ["flaky"]
    board = client.get("/api/leaderboard?board=flaky").json()["metadata"]
    assert board["failed_run"]["id"] == run.pk and board["total_votes"] == 8
    page = client.get("/leaderboard/?board=flaky").content.decode()
    assert 'data-testid="run-failed"' in page
    assert "these ratings are from 1\xa0hour ago" in page
    assert "failed" in client.get("/").content.decode().split("last rating run")[1][:200]

    flaky_board["broken"] = False  # the next run succeeds: the warning goes
    assert services.ratings_run(trigger=RunTrigger.VOTES).status == RunStatus.SUCCEEDED
    assert 'data-testid="run-failed"' not in client.get("/leaderboard/?board=flaky").content \
        .decode()

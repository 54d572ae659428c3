"""Judges' rankings as pairwise outcomes on the ``panel`` leaderboard board."""

import pytest
from django.test import Client

from leaderboard.boards import get_board
from leaderboard.models import EloBoardState, OnlineElo, RunTrigger
from leaderboard.runs.services import ratings_run
from panels import services
from panels.boards import PANEL_BOARD
from panels.models import PanelOutcome, PanelStatus
from panels.tests.panel_support import (
    PanelScript,
    panel_setup,
    self_first,
    wait_finished,
    wait_for,
    worker_idle,
)


@pytest.fixture
def clean_debounce():
    from django.core.cache import cache

    from leaderboard.runs.services import DEBOUNCE_KEY, LOCK_KEY

    keys = [DEBOUNCE_KEY.format(board="panel"), LOCK_KEY.format(board="panel")]
    cache.delete_many(keys)
    yield
    cache.delete_many(keys)


@pytest.fixture
def panel_done(celery_worker, fake_openai, fake_anthropic, settings, monkeypatch,
               clean_debounce):
    script, _ = panel_setup(fake_openai, fake_anthropic, settings, monkeypatch)
    panel = wait_finished(services.panel_create(question="What is 2+2?").id)
    assert panel.status == PanelStatus.DONE
    # The outcomes reach the leaderboard just after the verdict commits.
    wait_for(lambda: EloBoardState.objects.filter(board="panel", outcomes_applied=9).exists())
    yield panel, script
    wait_for(worker_idle)


def test_the_panel_board_is_registered():
    board = get_board("panel")
    assert board.title == "Panel (AI-judged)" and board.signal is not None


def test_each_valid_ranking_becomes_pairwise_outcomes(panel_done):
    panel, _ = panel_done
    outcomes = PanelOutcome.objects.filter(panel=panel)
    assert outcomes.count() == 3 * 3  # three judges, three pairs each
    assert outcomes.filter(is_self_vote=True).count() == 3 * 2
    assert sorted(PANEL_BOARD.outcomes()) == [
        ("alpha-7b", "beta-3b", "model_a", 3),
        ("alpha-7b", "gamma-1b", "model_a", 3),
        ("beta-3b", "gamma-1b", "model_a", 3),
    ]
    assert PANEL_BOARD.counts() == {"battles": 1, "votes_excluded": 0}


def test_the_online_elo_moves_and_a_rating_run_is_scheduled(panel_done):
    _, script = panel_done
    elo = dict(OnlineElo.objects.filter(board="panel").values_list("subject", "rating"))
    assert elo["alpha-7b"] > elo["beta-3b"] > elo["gamma-1b"]
    assert script.rating_runs == [("panel",)]  # one debounced run for the nine outcomes


def test_a_rating_run_ranks_the_peers_choice_first_and_the_page_shows_it(panel_done):
    run = ratings_run(trigger=RunTrigger.COMMAND, boards=["panel"])
    snapshot = run.snapshots.get(board="panel")
    entries = list(snapshot.entries.order_by("-rating").values_list("subject", flat=True))
    assert entries == ["alpha-7b", "beta-3b", "gamma-1b"]
    page = Client().get("/leaderboard/", {"board": "panel"})
    assert page.status_code == 200
    assert "Panel (AI-judged)" in page.content.decode()
    assert "Alpha Model" in page.content.decode()


def test_self_votes_can_be_left_off_the_board(celery_worker, fake_openai, fake_anthropic,
                                              settings, monkeypatch, clean_debounce):
    preference = ["gamma", "beta", "alpha"]
    script = PanelScript(preference=preference, judge_replies={
        judge: [lambda labels, judge=judge: self_first(labels, judge, preference)]
        for judge in ("alpha", "beta", "gamma")})
    panel_setup(fake_openai, fake_anthropic, settings, monkeypatch, script)
    settings.ARENA_PANEL_BOARD_SELF_VOTES = False
    wait_finished(services.panel_create(question="What is 2+2?").id)
    wait_for(lambda: EloBoardState.objects.filter(board="panel", outcomes_applied=3).exists())
    # Only the third party's view of each pair counts: every judge prefers gamma to beta
    # to alpha among the others.
    assert sorted(PANEL_BOARD.outcomes()) == [
        ("alpha-7b", "beta-3b", "model_b", 1),
        ("alpha-7b", "gamma-1b", "model_b", 1),
        ("beta-3b", "gamma-1b", "model_b", 1),
    ]
    assert PANEL_BOARD.counts()["votes_excluded"] == 6
    assert OnlineElo.objects.filter(board="panel").values("subject").distinct().count() == 3

"""The online Elo moves at vote time (K = 32, both bad 0.25 each) and replays in order."""

import dataclasses

import pytest

from battles.models import Position
from battles.tests.factories import vote_on
from leaderboard.boards import get_board, register_board
from leaderboard.models import EloBoardState, OnlineElo, RunTrigger
from leaderboard.runs import online_elo, services

from .factories import AIModelFactory, answered_battle, make_votes

pytestmark = pytest.mark.django_db


def elo(board="text"):
    return dict(OnlineElo.objects.filter(board=board).values_list("subject", "rating"))


@pytest.fixture
def pair():
    return AIModelFactory(slug="alpha"), AIModelFactory(slug="beta")


def vote(models, choice, *, left_is_a=True, capture):
    a, b = models
    battle = answered_battle(
        model_a=a, model_b=b, model_a_position=Position.LEFT if left_is_a else Position.RIGHT
    )
    with capture(execute=True):
        return vote_on(battle, choice=choice)


def test_a_vote_moves_the_online_elo_at_once_by_k_32(
    pair, scheduled, django_capture_on_commit_callbacks
):
    vote(pair, "left_better", capture=django_capture_on_commit_callbacks)
    assert elo() == {"alpha": pytest.approx(1516.0), "beta": pytest.approx(1484.0)}

    # right is better, and model a sits on the right: alpha wins again from 1516 vs 1484
    vote(pair, "right_better", left_is_a=False, capture=django_capture_on_commit_callbacks)
    expected_a = 1 / (1 + 10 ** ((1484 - 1516) / 400))
    gain = 32 * (1 - expected_a)
    assert elo()["alpha"] == pytest.approx(1516 + gain)
    assert elo()["beta"] == pytest.approx(1484 - gain)
    assert OnlineElo.objects.get(subject="alpha").votes == 2


def test_both_bad_costs_both_models_eight_points_from_equal_ratings(
    pair, scheduled, django_capture_on_commit_callbacks
):
    vote(pair, "both_bad", capture=django_capture_on_commit_callbacks)
    assert elo() == {"alpha": pytest.approx(1492.0), "beta": pytest.approx(1492.0)}


def test_a_tie_from_equal_ratings_changes_nothing(
    pair, scheduled, django_capture_on_commit_callbacks
):
    vote(pair, "tie", capture=django_capture_on_commit_callbacks)
    assert elo() == {"alpha": pytest.approx(1500.0), "beta": pytest.approx(1500.0)}


def test_a_vote_that_does_not_count_leaves_the_elo_alone(
    pair, scheduled, django_capture_on_commit_callbacks
):
    a, b = pair
    battle = answered_battle(model_a=a, model_b=b)
    battle.turns.first().responses.filter(slot="a").update(text=f"I am {a.name}.")
    with django_capture_on_commit_callbacks(execute=True):
        v = vote_on(battle, choice="left_better")
    assert not v.counts_for_rating
    assert elo() == {}
    assert scheduled == []


def test_a_run_replays_the_elo_when_votes_arrived_without_signals():
    make_votes([("alpha", "beta", "model_a", 1), ("alpha", "beta", "both_bad", 1)])
    services.ratings_run(trigger=RunTrigger.COMMAND)
    # 1516/1484, then both bad: E_a = 1/(1+10^(-32/400))
    e_a = 1 / (1 + 10 ** (-32 / 400))
    assert elo()["alpha"] == pytest.approx(1516 + 32 * (0.25 - e_a))
    assert elo()["beta"] == pytest.approx(1484 + 32 * (0.25 - (1 - e_a)))
    state = EloBoardState.objects.get(board="text")
    assert state.outcomes_applied == 2 and state.watermark is not None


def test_a_replayed_vote_is_not_applied_twice():
    (v,) = make_votes([("alpha", "beta", "model_a", 1)])
    online_elo.online_elo_replay(board_name="text")
    before = elo()
    result = online_elo.online_elo_apply(
        board_name="text",
        subject_a="alpha",
        subject_b="beta",
        winner="model_a",
        created_at=v.created_at,
    )
    assert result is None and elo() == before


def test_a_consistent_table_is_not_replayed(
    pair, scheduled, django_capture_on_commit_callbacks, monkeypatch
):
    vote(pair, "left_better", capture=django_capture_on_commit_callbacks)
    replays = []
    monkeypatch.setattr(services, "online_elo_replay", lambda **kw: replays.append(kw))
    services.ratings_run(trigger=RunTrigger.COMMAND)
    assert replays == []


def test_the_replay_adds_outcomes_committed_while_it_read():
    """Votes that land between the unlocked read and the locked write are not lost."""
    from battles import boards as text_boards

    make_votes([("alpha", "beta", "model_a", 2)])
    original = text_boards.TEXT_BOARD.ordered_outcomes
    late = []

    def reading(since=None):
        rows = list(original(since=since))
        if since is None and not late:  # a vote arrives right after the first read
            late.extend(make_votes([("beta", "alpha", "model_a", 1)]))
        return rows

    board = get_board("text")
    register_board(dataclasses.replace(board, ordered_outcomes=reading))
    try:
        assert online_elo.online_elo_replay(board_name="text") == 3
    finally:
        register_board(board)
    r_a, r_b = 1516.0, 1484.0
    r_a, r_b = elo_step(r_a, r_b, 1.0)
    r_b, r_a = elo_step(r_b, r_a, 1.0)
    assert elo() == {"alpha": pytest.approx(r_a), "beta": pytest.approx(r_b)}
    assert EloBoardState.objects.get(board="text").watermark == late[0].created_at


def elo_step(r_a, r_b, s_a):
    e_a = 1 / (1 + 10 ** ((r_b - r_a) / 400))
    return r_a + 32 * (s_a - e_a), r_b + 32 * ((1 - s_a) - (1 - e_a))

"""A burst of votes schedules one rating run within the debounce delay (real Redis)."""

import pytest
from django.core.cache import cache

from battles.tests.factories import vote_on
from leaderboard.models import BoardSnapshot, RatingRun, RunTrigger
from leaderboard.runs import services
from leaderboard.tasks import ratings_run_board

from .factories import AIModelFactory, answered_battle

pytestmark = pytest.mark.django_db

KEY = services.DEBOUNCE_KEY.format(board="text")


def cast(n, capture):
    a, b = AIModelFactory(slug="alpha"), AIModelFactory(slug="beta")
    for _ in range(n):
        battle = answered_battle(model_a=a, model_b=b)
        with capture(execute=True):
            vote_on(battle, choice="left_better")


def test_two_votes_schedule_one_run(scheduled, settings, django_capture_on_commit_callbacks):
    settings.ARENA_LEADERBOARD_DEBOUNCE_SECONDS = 20
    cast(2, django_capture_on_commit_callbacks)
    assert scheduled == [(("text",), 20)]
    assert cache.get(KEY) is not None
    # the key outlives the countdown, so votes during the wait add no run
    raw_key = cache.make_and_validate_key(KEY)
    ttl = cache._cache.get_client(raw_key).ttl(raw_key)
    assert 20 < ttl <= 20 + 600


def test_the_run_clears_the_key_so_the_next_vote_schedules_again(
    scheduled, django_capture_on_commit_callbacks
):
    cast(3, django_capture_on_commit_callbacks)
    assert len(scheduled) == 1
    ratings_run_board.run("text")  # what the worker does when the countdown ends
    assert cache.get(KEY) is None
    run = RatingRun.objects.get()
    assert (run.trigger, run.status, run.outcomes_processed) == (RunTrigger.VOTES, "succeeded", 3)
    assert BoardSnapshot.objects.filter(board="text").exists()
    cast(1, django_capture_on_commit_callbacks)
    assert len(scheduled) == 2


def test_a_busy_board_makes_the_debounced_task_retry(monkeypatch):
    cache.add(services.LOCK_KEY.format(board="text"), "someone-else", 60)
    retried = []

    def fake_retry(*args, **kwargs):
        retried.append(kwargs.get("countdown"))
        return RuntimeError("retry")

    monkeypatch.setattr(ratings_run_board, "retry", fake_retry)
    monkeypatch.setattr(services, "_board_locks", _instant_locks(services._board_locks))
    with pytest.raises(RuntimeError):
        ratings_run_board.run("text")
    assert retried == [15]
    assert not RatingRun.objects.exists()


def _instant_locks(original):
    def locks(names, *, wait):
        return original(names, wait=0)

    return locks

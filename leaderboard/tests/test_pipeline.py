"""End to end on the real broker: a vote schedules a debounced run that a real Celery
worker performs, and the board then shows the vote."""

from django.test import Client

from battles.tests.factories import vote_on
from leaderboard.models import RatingRun
from testkit import waiting

from .factories import AIModelFactory, answered_battle


def wait_for(condition, timeout: float = 60.0) -> bool:
    return bool(waiting.wait_for(condition, timeout))


def test_votes_reach_the_board_through_the_worker(celery_worker, settings):
    settings.ARENA_LEADERBOARD_DEBOUNCE_SECONDS = 2
    settings.ARENA_LEADERBOARD_MIN_VOTES = 1
    alpha, beta = AIModelFactory(slug="alpha"), AIModelFactory(slug="beta")
    for choice in ("left_better", "left_better", "tie"):
        vote_on(answered_battle(model_a=alpha, model_b=beta), choice=choice)

    # (one run per burst is asserted in test_debounce)
    assert wait_for(lambda: RatingRun.objects.filter(
        status="succeeded", trigger="votes", outcomes_processed=3).exists())

    data = Client().get("/api/leaderboard").json()
    top = data["leaderboard"][0]
    assert top["model_id"] == "alpha" and top["votes"] == 3 and top["wins"] == 2
    assert top["elo"] > 1500  # the online Elo moved at vote time

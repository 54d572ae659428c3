"""The admin's "Run rating now" button and actions."""

import pytest
from django.test import Client

from leaderboard.models import BoardSnapshot, RatingRun, RunTrigger

from .factories import make_votes

pytestmark = pytest.mark.django_db


def test_run_now_button_rates_every_board(staff):
    make_votes([("alpha", "beta", "model_a", 6), ("beta", "alpha", "tie", 2)])
    page = staff.get("/admin/leaderboard/ratingrun/")
    assert page.status_code == 200 and b"Run rating now" in page.content
    response = staff.post("/admin/leaderboard/ratingrun/run-now/", follow=True)
    assert response.status_code == 200
    run = RatingRun.objects.get()
    assert (run.trigger, run.status, run.outcomes_processed) == (RunTrigger.ADMIN, "succeeded", 8)
    assert b"8 outcomes" in response.content


def test_run_now_needs_a_post(staff):
    assert staff.get("/admin/leaderboard/ratingrun/run-now/").status_code == 405
    assert not RatingRun.objects.exists()


def test_snapshot_action_recomputes_its_board(staff):
    make_votes([("alpha", "beta", "model_a", 6)])
    staff.post("/admin/leaderboard/ratingrun/run-now/")
    snap = BoardSnapshot.objects.get()
    staff.post("/admin/leaderboard/boardsnapshot/",
                       {"action": "recompute", "_selected_action": [snap.pk]})
    assert BoardSnapshot.objects.count() == 2
    assert RatingRun.objects.order_by("-id").first().boards == ["text"]


def test_visitors_cannot_run_it():
    response = Client().post("/admin/leaderboard/ratingrun/run-now/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert not RatingRun.objects.exists()

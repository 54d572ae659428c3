"""Rating runs: what they record, what the snapshot holds, and that reads never fit."""

import numpy as np
import pytest
from django.test import Client

from arena.models import AIModel, ModelStatus
from leaderboard.boards import Board, get_board, register_board, unregister_board
from leaderboard.models import BoardSnapshot, RatingRun, RunStatus, RunTrigger
from leaderboard.ratings import sandwich_bradley_terry
from leaderboard.ratings.provisional import shrink_provisional
from leaderboard.runs import compute, services

from .factories import make_votes

pytestmark = pytest.mark.django_db

DATA = [
    ("alpha", "beta", "model_a", 30),
    ("beta", "alpha", "model_a", 10),
    ("alpha", "gamma", "model_a", 25),
    ("gamma", "alpha", "tie", 5),
    ("beta", "gamma", "model_a", 18),
    ("gamma", "beta", "both_bad", 6),
    ("beta", "gamma", "model_b", 9),
    ("delta", "alpha", "model_b", 3),
    ("beta", "delta", "tie", 1),  # delta: 4 votes
]


@pytest.fixture
def rated():
    make_votes(DATA)
    run = services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    assert run.status == RunStatus.SUCCEEDED, run.error
    return run


def test_a_run_is_recorded_with_its_outcome_count_and_duration(rated):
    run = RatingRun.objects.get()
    assert run.boards == ["text"]
    assert run.outcomes_processed == sum(n for *_x, n in DATA)
    assert run.finished_at >= run.started_at
    assert run.duration_ms is not None and run.error == ""


def test_the_snapshot_holds_the_engine_ratings_and_the_tallies(rated):
    snap = BoardSnapshot.objects.get(board="text")
    grouped = compute.group_rows(DATA)
    fit = sandwich_bradley_terry(grouped.a, grouped.b, grouped.code, grouped.count, grouped.n)
    # delta (4 votes) is provisional: shown under the weak prior, the others re-centred.
    provisional = np.array([s == "delta" for s in grouped.subjects])
    rating, lower, _ = shrink_provisional(fit.ratings, fit.ci_lower, fit.ci_upper, grouped.a,
                                          grouped.b, grouped.code, grouped.count, provisional)
    entries = {e.subject: e for e in snap.entries.all()}
    for i, subject in enumerate(grouped.subjects):
        assert entries[subject].rating == pytest.approx(rating[i])
        assert entries[subject].ci_lower == pytest.approx(lower[i])
    alpha = entries["alpha"]
    assert (alpha.votes, alpha.wins, alpha.losses, alpha.ties) == (73, 58, 10, 5)
    assert alpha.ci_lower < alpha.rating < alpha.ci_upper
    assert snap.method == "bt" and snap.ci_method == "sandwich"
    assert snap.outcomes == 107


def test_models_under_five_votes_are_provisional_and_unranked(rated, settings):
    entries = {e.subject: e for e in BoardSnapshot.objects.get().entries.all()}
    assert entries["delta"].votes == 4
    assert entries["delta"].provisional and entries["delta"].rank_ub == 0
    assert not entries["gamma"].provisional and entries["gamma"].rank_ub >= 1
    # one more vote and delta is rated
    make_votes([("delta", "gamma", "model_a", 1)])
    services.ratings_run(trigger=RunTrigger.COMMAND)
    delta = BoardSnapshot.objects.order_by("-id").first().entries.get(subject="delta")
    assert delta.votes == 5 and not delta.provisional and delta.rank_ub >= 1


def test_one_vote_between_two_new_models_gives_no_absurd_numbers(db):
    """The reported defect: one panel vote gave 2735 against -735 (±170)."""
    make_votes([("newcomer-a", "newcomer-b", "model_a", 1)])
    services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    entries = {e.subject: e for e in BoardSnapshot.objects.get().entries.all()}
    winner, loser = entries["newcomer-a"], entries["newcomer-b"]
    assert winner.provisional and loser.provisional
    assert 1000 < winner.rating < 1100 and 900 < loser.rating < 1000
    assert winner.ci_lower < 1000 < winner.ci_upper


def test_the_minimum_is_a_setting(rated, settings):
    settings.ARENA_LEADERBOARD_MIN_VOTES = 50
    services.ratings_run(trigger=RunTrigger.COMMAND)
    snap = BoardSnapshot.objects.order_by("-id").first()
    rated_now = sorted(snap.entries.filter(provisional=False).values_list("subject", flat=True))
    assert rated_now == ["alpha", "beta", "gamma"]  # alpha 73, beta 74, gamma 68 votes


def test_rank_ub_counts_models_whose_interval_is_entirely_above(rated):
    entries = list(BoardSnapshot.objects.get().entries.filter(provisional=False))
    for e in entries:
        above = sum(1 for o in entries if o.ci_lower > e.ci_upper)
        assert e.rank_ub == 1 + above


def test_pages_and_the_api_read_the_snapshot_without_fitting(rated, monkeypatch):
    calls = []
    for name in ("fit_bt", "fit_elo", "fit_glicko2", "group_rows"):
        original = getattr(compute, name)
        monkeypatch.setattr(
            compute, name, lambda *a, _o=original, _n=name, **k: calls.append(_n) or _o(*a, **k)
        )
    for engine in ("sandwich_bradley_terry", "bootstrap_bradley_terry"):
        monkeypatch.setattr(compute, engine, lambda *a, **k: calls.append("engine"))
    client = Client()
    assert client.get("/leaderboard/").status_code == 200
    assert client.get("/leaderboard/?sort=votes&q=al").status_code == 200
    assert client.get("/api/leaderboard?include_provisional=true").status_code == 200
    assert client.get("/api/leaderboard/stats").status_code == 200
    assert calls == []
    # and the counting works: a run does call them
    services.ratings_run(trigger=RunTrigger.COMMAND)
    assert "fit_bt" in calls


def test_a_failing_board_is_recorded_as_a_failed_run():
    def broken():
        raise RuntimeError("the outcomes table is on fire")

    register_board(Board(name="broken", title="Broken", outcomes=broken))
    try:
        run = services.ratings_run(trigger=RunTrigger.API, boards=["broken"])
    finally:
        unregister_board("broken")
    assert run.status == RunStatus.FAILED
    assert "on fire" in run.error
    assert not BoardSnapshot.objects.filter(board="broken").exists()


def test_deprecated_models_get_a_second_rank_without_them(rated):
    AIModel.objects.filter(slug="alpha").update(status=ModelStatus.DEPRECATED)
    services.ratings_run(trigger=RunTrigger.COMMAND)
    entries = {e.subject: e for e in BoardSnapshot.objects.order_by("-id").first().entries.all()}
    assert entries["alpha"].deprecated and entries["alpha"].rank_ub_active == 0
    assert entries["beta"].rank_ub_active <= entries["beta"].rank_ub


def test_old_snapshots_are_pruned(rated, settings):
    settings.ARENA_LEADERBOARD_KEEP_SNAPSHOTS = 2
    for _ in range(3):
        services.ratings_run(trigger=RunTrigger.COMMAND)
    assert BoardSnapshot.objects.filter(board="text").count() == 2


def test_bootstrap_intervals_on_request(rated):
    run = services.ratings_run(trigger=RunTrigger.COMMAND, bootstrap_rounds=20)
    snap = run.snapshots.get()
    assert (snap.ci_method, snap.bootstrap_rounds) == ("bootstrap", 20)
    lower = np.array([e.ci_lower for e in snap.entries.all()])
    upper = np.array([e.ci_upper for e in snap.entries.all()])
    assert np.all(lower <= upper)


def test_a_glicko2_board_rates_by_period():
    make_votes(DATA)
    text = get_board("text")
    register_board(
        Board(
            name="glicko",
            title="Glicko",
            outcomes=text.outcomes,
            period_outcomes=text.period_outcomes,
            primary_method="glicko2",
        )
    )
    try:
        run = services.ratings_run(trigger=RunTrigger.COMMAND, boards=["glicko"])
    finally:
        unregister_board("glicko")
    assert run.status == RunStatus.SUCCEEDED, run.error
    snap = run.snapshots.get()
    entries = {e.subject: e for e in snap.entries.all()}
    assert snap.method == "glicko2" and snap.ci_method == "rd"
    assert entries["alpha"].rating > 1500 > entries["gamma"].rating
    assert entries["alpha"].ci_upper - entries["alpha"].rating < 350 * 1.96


def test_a_run_over_no_votes_writes_an_empty_snapshot():
    run = services.ratings_run(trigger=RunTrigger.COMMAND)
    assert run.status == RunStatus.SUCCEEDED
    snap = run.snapshots.get()
    assert (snap.outcomes, snap.models_total, snap.entries.count()) == (0, 0, 0)
    html = Client().get("/leaderboard/").content.decode()
    assert 'data-testid="no-rows"' in html

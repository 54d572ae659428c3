"""What the operations page reads: the ledger per provider and per model, every mode's work
and votes through its declaration, and the boards' movement. Times are fixed (``NOW``) and
passed in, so the windows' edges are exact whatever the clock says."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from arena.models import AIModel, ModelCall, ProviderKind
from arena.steps import StepStatus
from battles.models import Response, Turn, Vote
from battles.tests.factories import ResponseFactory, TurnFactory
from debates.models import CrowdChoice, CrowdVote, Debate, DebateStatus
from debates.tests.debate_support import debate_row
from leaderboard.models import BoardSnapshot, SnapshotEntry
from leaderboard.tests.factories import make_votes
from ops.calls import models_spend_today, providers_calls
from ops.figures import percentile
from ops.ratings import Z95, board_stability
from ops.selectors import operations_overview
from ops.work import modes_completion, modes_votes_per_day

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def call(provider: str = "Acme", *, ago: timedelta, ok: bool = True, latency: int | None = 100,
         model: str = "alpha", mode: str = "battles", cost: float = 0.0,
         endpoint: str = "own", error: str = "") -> ModelCall:
    return ModelCall.objects.create(
        created_at=NOW - ago, provider=provider, model_slug=model, mode=mode, kind="Response",
        ok=ok, error_kind=error, latency_ms=latency, ttft_ms=latency and latency // 2,
        cost_usd=cost, endpoint=endpoint)


def registered(slug: str, *, cap: str | None) -> AIModel:
    return AIModel.objects.create(
        slug=slug, name=slug.title(), api_model=slug, provider="Acme",
        provider_kind=ProviderKind.OPENAI, daily_spend_usd=None if cap is None else Decimal(cap))


def test_an_empty_arena_reads_as_nothing_yet():
    overview = operations_overview(now=NOW)
    assert overview.providers == [] and overview.spend == []
    assert overview.votes.total == 0
    assert set(overview.votes.per_mode) == {"Battle", "Debates", "Voice"}  # panels take none
    assert all(counts == [0] * 14 for counts in overview.votes.per_mode.values())
    # Every declared kind of work is listed, with nothing to divide: no rate, no duration.
    assert {(c.mode, c.work) for c in overview.completion} >= {
        ("Battle", "answers"), ("Panel", "panels"), ("Debates", "debates"), ("Voice", "calls")}
    for c in overview.completion:
        for figures in c.windows.values():
            assert (figures.started, figures.completion_rate, figures.p50_ms) == (0, None, None)
    assert overview.boards and all(stability is None for _, _, stability in overview.boards)
    assert overview.beat.state in ("late", "unknown")


def test_a_single_call_is_its_own_median_and_95th_percentile():
    call(ago=timedelta(minutes=5), latency=730)
    [acme] = providers_calls(now=NOW)
    for window in ("hour", "day"):
        figures = acme.windows[window]
        assert (figures.calls, figures.failed, figures.error_rate) == (1, 0, 0.0)
        assert figures.p50_ms == figures.p95_ms == 730.0
    assert percentile([], 0.5) is None


def test_calls_older_than_an_hour_count_in_the_day_only():
    call(ago=timedelta(minutes=10), latency=100)
    call(ago=timedelta(minutes=20), ok=False, latency=9000, error="timeout")
    for latency in (1000, 2000, 3000):
        call(ago=timedelta(hours=5), latency=latency)
    call(ago=timedelta(hours=23), ok=False, latency=None, error="server_error")
    call(ago=timedelta(hours=23, minutes=30), ok=False, latency=None, error="server_error")
    call("Beta", ago=timedelta(days=2))  # outside both windows: Beta is not listed
    [acme] = providers_calls(now=NOW)
    hour, day = acme.windows["hour"], acme.windows["day"]
    assert (hour.calls, hour.failed, hour.error_rate) == (2, 1, 0.5)
    assert hour.p50_ms == hour.p95_ms == 100.0  # the failed call's 9 s is not a latency
    assert (day.calls, day.failed, day.error_rate) == (7, 3, 3 / 7)
    assert (day.p50_ms, day.p95_ms) == (1000.0, 3000.0)  # of 100, 1000, 2000, 3000
    assert acme.top_error == "server_error"


def test_spend_today_per_model_and_mode_against_its_cap():
    registered("alpha", cap="1.00")
    registered("beta", cap="0")
    call(ago=timedelta(hours=1), cost=0.30, mode="battles")
    call(ago=timedelta(hours=2), cost=0.20, mode="debates")
    call(ago=timedelta(hours=3), cost=0.10, mode="battles", endpoint="fallback")
    call(ago=timedelta(hours=13), cost=5.00)  # yesterday (NOW is noon UTC)
    call(ago=timedelta(hours=1), cost=0.90, model="gone", mode="panels")
    call(ago=timedelta(hours=1), cost=0.05, model="beta", mode="agents")
    spend = {m.slug: m for m in models_spend_today(now=NOW)}
    assert list(spend) == ["gone", "alpha", "beta"]  # the highest spender first
    alpha = spend["alpha"]
    assert alpha.total_usd == pytest.approx(0.60) and alpha.calls == 3
    assert alpha.by_mode == [("Battle", pytest.approx(0.40)), ("Debates", pytest.approx(0.20))]
    # The cap holds per endpoint: its own provider's 0.50 is the fuller, half the cap.
    assert (alpha.cap_usd, alpha.used, alpha.status) == (1.0, pytest.approx(0.5), "ok")
    assert (spend["beta"].cap_usd, spend["beta"].used) == (0.0, None)  # 0: no cap
    assert spend["beta"].by_mode == [("Voice", pytest.approx(0.05))]
    assert spend["gone"].cap_usd is None and spend["gone"].name == "gone"


def test_a_model_at_its_cap_reads_as_spent():
    registered("alpha", cap="0.50")
    call(ago=timedelta(minutes=1), cost=0.50)
    [alpha] = models_spend_today(now=NOW)
    assert (alpha.used, alpha.status) == (pytest.approx(1.0), "spent")


def _answer(status: str, *, ago: timedelta, latency: int | None) -> Response:
    turn = TurnFactory()
    Turn.objects.filter(pk=turn.pk).update(created_at=NOW - ago)  # auto_now_add: set after
    return ResponseFactory(turn=turn, status=status, latency_ms=latency)


def test_completion_and_durations_per_window_from_each_modes_declaration():
    _answer(StepStatus.DONE, ago=timedelta(minutes=5), latency=100)
    _answer(StepStatus.DONE, ago=timedelta(minutes=6), latency=300)
    _answer(StepStatus.FAILED, ago=timedelta(minutes=7), latency=None)
    _answer(StepStatus.RUNNING, ago=timedelta(minutes=8), latency=None)
    _answer(StepStatus.DONE, ago=timedelta(hours=5), latency=1000)
    _answer(StepStatus.DONE, ago=timedelta(days=3), latency=50)  # in neither window
    debate = debate_row()
    Debate.objects.filter(pk=debate.pk).update(status=DebateStatus.CANCELLED,
                                               created_at=NOW - timedelta(minutes=1))
    work = {(c.mode, c.work): c.windows for c in modes_completion(now=NOW)}
    hour, day = work["Battle", "answers"]["hour"], work["Battle", "answers"]["day"]
    assert (hour.started, hour.done, hour.failed, hour.unfinished) == (4, 2, 1, 1)
    assert hour.completion_rate == pytest.approx(2 / 3)
    assert (hour.p50_ms, hour.p95_ms) == (100.0, 300.0)
    assert (day.started, day.done, day.failed) == (5, 3, 1)
    assert (day.p50_ms, day.p95_ms) == (300.0, 1000.0)
    # A cancelled debate neither completed nor failed: started, no rate.
    debates = work["Debates", "debates"]["hour"]
    assert (debates.started, debates.done, debates.failed) == (1, 0, 0)
    assert debates.completion_rate is None


def test_votes_per_day_per_mode_leave_out_reveals_and_older_days():
    votes = make_votes([("alpha", "beta", "model_a", 4)])
    for vote, days_ago in zip(votes, (0, 0, 2, 20), strict=True):
        Vote.objects.filter(pk=vote.pk).update(created_at=NOW - timedelta(days=days_ago))
    debate = debate_row()
    for session, choice in (("s1", CrowdChoice.PRO), ("s2", CrowdChoice.REVEALED)):
        CrowdVote.objects.create(debate=debate, session_key=session, choice=choice,
                                 created_at=NOW - timedelta(hours=1))
    days = modes_votes_per_day(now=NOW, days=14)
    assert days.days[-1] == NOW.date() and len(days.days) == 14
    assert days.per_mode["Battle"][-1] == 2 and days.per_mode["Battle"][-3] == 1
    assert sum(days.per_mode["Battle"]) == 3  # the vote of 20 days ago is not shown
    assert days.per_mode["Debates"][-1] == 1  # the reveal is not a vote
    assert sum(days.per_mode["Voice"]) == 0
    assert days.total == 4


def _snapshot(board: str, at: datetime, entries: list[tuple], method: str = "bt") -> None:
    snapshot = BoardSnapshot.objects.create(board=board, created_at=at, method=method,
                                            ci_method="rd", min_votes=5, outcomes=100)
    SnapshotEntry.objects.bulk_create(
        SnapshotEntry(snapshot=snapshot, subject=subject, name=subject.title(), rating=rating,
                      ci_lower=rating - half, ci_upper=rating + half, rank_ub=rank,
                      provisional=rank == 0)
        for subject, rating, half, rank in entries)


def test_a_boards_movement_between_its_last_two_runs():
    _snapshot("text", NOW - timedelta(hours=3), [("old", 900.0, 10.0, 1)])  # not compared
    _snapshot("text", NOW - timedelta(hours=2), [
        ("alpha", 1000.0, 20.0, 1), ("beta", 990.0, 30.0, 2), ("gamma", 800.0, 90.0, 0)])
    _snapshot("text", NOW - timedelta(hours=1), [
        ("beta", 1030.0, 10.0, 1), ("alpha", 1010.0, 20.0, 2), ("delta", 950.0, 40.0, 3),
        ("gamma", 700.0, 80.0, 0)], method="glicko2")
    stability = board_stability(board="text", title="Text")
    assert [p.at for p in stability.runs] == [NOW - timedelta(hours=h) for h in (3, 2, 1)]
    assert stability.method == "glicko2" and stability.uncertainty_label == "RD"
    # Provisional models (gamma) neither move nor count in the uncertainty.
    assert stability.runs[-1].uncertainty == pytest.approx(20.0 / Z95)
    assert stability.compared == 2
    assert (stability.mean_move, stability.max_move) == (pytest.approx(25.0), 40.0)
    assert stability.max_mover == "Beta"
    assert stability.rank_changes == 3  # beta 2 → 1, alpha 1 → 2, delta new at 3
    assert stability.entered_top == ("Delta",)


def test_a_board_with_one_run_has_nothing_to_compare():
    _snapshot("text", NOW, [("alpha", 1000.0, 20.0, 1)])
    stability = board_stability(board="text", title="Text")
    assert len(stability.runs) == 1 and stability.uncertainty_label == "standard error"
    assert (stability.compared, stability.mean_move, stability.max_mover) == (0, None, "")
    assert board_stability(board="never-rated", title="Never") is None

"""Figures about the boards and their runs: the stats and worker API of seed 001, and the
leaderboard's line on the home page. Reads only."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Max
from django.utils import timezone

from arena.modes import Figure
from arena.templatetags.arena_tags import ago
from leaderboard.boards import boards
from leaderboard.models import BoardSnapshot, RatingRun, RunStatus, SnapshotEntry
from leaderboard.pages.selectors import board_failed_run, snapshot_latest
from leaderboard.runs.services import debounce_pending


def leaderboard_stats() -> dict:
    """Totals over the latest snapshot of every board, plus the last run."""
    per_board = {}
    battles = votes = 0
    models: set[str] = set()
    latest_ids = (
        BoardSnapshot.objects.filter(category="").values("board")
        .annotate(last=Max("id"))
        .values_list("last", flat=True)
    )
    snapshots = {s.board: s for s in BoardSnapshot.objects.filter(id__in=list(latest_ids))}
    subjects = SnapshotEntry.objects.filter(snapshot__in=snapshots.values()).values_list(
        "snapshot__board", "subject"
    )
    by_board: dict[str, set[str]] = {}
    for board_name, subject in subjects:
        by_board.setdefault(board_name, set()).add(subject)
    for board in boards():
        snap = snapshots.get(board.name)
        names = by_board.get(board.name, set())
        models |= names
        per_board[board.name] = {
            "title": board.title,
            "method": snap.method if snap else board.primary_method,
            "outcomes": snap.outcomes if snap else 0,
            "battles": snap.battles if snap else None,
            "votes": snap.votes_total if snap else None,
            "models": len(names),
            "models_rated": snap.models_rated if snap else 0,
            "last_updated": snap.created_at if snap else None,
            "failed_run": run_summary(failed) if (
                failed := board_failed_run(board=board.name, snapshot=snap)) else None,
        }
        if snap:
            battles += snap.battles or 0
            votes += snap.votes_total if snap.votes_total is not None else snap.outcomes
    last_run = RatingRun.objects.order_by("-started_at", "-id").first()
    updated = [s.created_at for s in snapshots.values()]
    return {
        "total_battles": battles,
        "total_votes": votes,
        "total_models": len(models),
        "last_updated": max(updated) if updated else None,
        "boards": per_board,
        "last_run": run_summary(last_run) if last_run else None,
    }


def run_summary(run: RatingRun) -> dict:
    return {
        "id": run.pk,
        "boards": run.boards,
        "trigger": run.trigger,
        "status": run.status,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "duration_ms": run.duration_ms,
        "outcomes_processed": run.outcomes_processed,
        "error": run.error,
        "failed_boards": run.failed_boards,
    }


RUN_STILL_EXPECTED = timedelta(minutes=10)  # a run "running" longer than this died


def board_rating_soon(*, board: str) -> bool:
    """Counted votes of ``board`` are a moment from being rated: a run is scheduled (within
    ``ARENA_LEADERBOARD_DEBOUNCE_SECONDS`` of a vote) or running. Its page says so and reads
    itself again until the run's snapshot is in. Unknown while Redis does not answer: no."""
    try:
        if debounce_pending(board_name=board):
            return True
    except Exception:  # Redis down: the page still answers, without the promise
        return False
    running = RatingRun.objects.filter(
        status=RunStatus.RUNNING, started_at__gte=timezone.now() - RUN_STILL_EXPECTED,
    ).values_list("boards", flat=True)[:20]
    return any(board in names for names in running)


def worker_status(*, recent: int = 10) -> dict:
    """Seed 001's worker status: the last run, recent runs, debounced runs waiting."""
    runs = list(RatingRun.objects.order_by("-started_at", "-id")[:recent])
    last = runs[0] if runs else None
    last_ok = (
        RatingRun.objects.filter(status="succeeded").order_by("-started_at", "-id").first()
    )
    pending = {}
    for board in boards():
        try:
            when = debounce_pending(board_name=board.name)
        except Exception:  # Redis down: the status page still answers
            when = None
        if when:
            pending[board.name] = when
    return {
        "last_run": last.started_at if last else None,
        "status": last.status if last else "never_run",
        "votes_processed": last.outcomes_processed if last else 0,
        "last_success": last_ok.finished_at if last_ok else None,
        "pending_runs": pending,
        "runs": [run_summary(r) for r in runs],
    }


def home_figures() -> list[Figure]:
    """The last rating run and who leads the first board (its top-rated, non-provisional
    entry), linking to the board."""
    figures = []
    run = RatingRun.objects.filter(finished_at__isnull=False).order_by("-finished_at").first()
    if run is not None and run.status == RunStatus.FAILED:
        figures.append(Figure("last rating run", f"failed {ago(run.finished_at)}",
                              url="/leaderboard/"))
    else:
        figures.append(Figure("last rating run", ago(run.finished_at) if run else "none yet",
                              url="/leaderboard/"))
    first = boards()[0] if boards() else None
    snapshot = snapshot_latest(board=first.name) if first else None
    if snapshot is not None:
        top = (snapshot.entries.filter(provisional=False).order_by("-rating").first()
               or snapshot.entries.order_by("-rating").first())
        if top is not None:
            figures.append(Figure(f"leads the {first.title}", top.name, url="/leaderboard/"))
    return figures

"""Writes of the leaderboard: rating runs, and the way a counted outcome reaches them (the
online Elo at once, a debounced run soon after).

A run rates each board in three steps: read its outcomes (:mod:`leaderboard.runs.reading`:
aggregated in SQL, or one scan of its votes), compute its numbers
(:mod:`leaderboard.runs.rating`: Bradley–Terry with sandwich or bootstrap intervals, or
Glicko-2 / Elo where a board asks for it) and write them as one
:class:`~leaderboard.models.BoardSnapshot` (:mod:`leaderboard.runs.snapshots`); then the
same for each of its categories with enough votes. Nothing here runs on a page request.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from arena.contests.bans import bans_apply
from arena.steps import batch_soon, batch_started, send_task
from leaderboard.boards import Board, board_names, get_board
from leaderboard.models import BoardSnapshot, RatingRun, RunStatus
from leaderboard.runs.online_elo import elo_applied, online_elo_apply, online_elo_replay
from leaderboard.runs.rating import FitOptions, Progress, board_numbers, fit_options
from leaderboard.runs.reading import BoardOutcomes, board_outcomes_read
from leaderboard.runs.snapshots import snapshot_write

logger = logging.getLogger(__name__)

RUN_IN_PROGRESS = "A rating run of the {board} board is already in progress; try again shortly."
NO_BOARDS = "No boards are registered, so there is nothing to rate."

DEBOUNCE_KEY = "leaderboard:debounce:{board}"
LOCK_KEY = "leaderboard:running:{board}"
LOCK_TTL_SECONDS = 15 * 60


class RunInProgress(Exception):
    def __init__(self, board: str) -> None:
        self.board = board
        self.message = RUN_IN_PROGRESS.format(board=board)
        super().__init__(self.message)


# --- locks and the debounce key (Redis, through the cache) -----------------------------


@contextmanager
def _board_locks(names: list[str], *, wait: float) -> Iterator[None]:
    """Hold one Redis lock per board (sorted, so two runs never deadlock)."""
    token = uuid.uuid4().hex
    held: list[str] = []
    try:
        for name in sorted(names):
            key = LOCK_KEY.format(board=name)
            deadline = time.monotonic() + wait
            while not cache.add(key, token, LOCK_TTL_SECONDS):
                if time.monotonic() >= deadline:
                    raise RunInProgress(name)
                time.sleep(0.1)
            held.append(key)
        yield
    finally:
        for key in held:
            if cache.get(key) == token:
                cache.delete(key)


def debounced_run_schedule(*, board_name: str) -> bool:
    """Schedule one run of ``board_name`` within the debounce delay; True if this call did
    (:func:`arena.steps.batch_soon`: a burst of votes yields one run, and the run clears the
    key as it starts, so outcomes that arrive while it works schedule the next one)."""
    delay = settings.ARENA_LEADERBOARD_DEBOUNCE_SECONDS
    return batch_soon(DEBOUNCE_KEY.format(board=board_name),
                      lambda: run_send(board_name, countdown=delay), countdown=delay,
                      value=timezone.now().isoformat())


def run_send(board_name: str, *, countdown: float) -> None:
    """Queue a rating run of the board (by task name: services never import tasks)."""
    send_task("leaderboard.tasks.ratings_run_board", [board_name], countdown=countdown)


def debounce_clear(*, board_name: str) -> None:
    batch_started(DEBOUNCE_KEY.format(board=board_name))


def debounce_pending(*, board_name: str) -> str | None:
    """When a debounced run of the board was scheduled (ISO time), if one is waiting."""
    return cache.get(DEBOUNCE_KEY.format(board=board_name))


# --- the online Elo --------------------------------------------------------------------


def outcome_recorded(*, board_name: str, outcome: tuple) -> None:
    """A counted outcome was committed: update the online Elo, schedule a debounced run."""
    subject_a, subject_b, winner, created_at = outcome
    online_elo_apply(
        board_name=board_name,
        subject_a=subject_a,
        subject_b=subject_b,
        winner=winner,
        created_at=created_at,
    )
    debounced_run_schedule(board_name=board_name)


# --- rating runs -----------------------------------------------------------------------


def board_recompute(
    *,
    board_name: str,
    run: RatingRun | None = None,
    ci_method: str | None = None,
    bootstrap_rounds: int | None = None,
    progress: Progress | None = None,
) -> BoardSnapshot:
    """Rate one board: read its outcomes once, rate the whole set and store its snapshot, then
    each of its categories with enough votes from the same read (no online Elo, no style
    control there). The caller holds the board's lock.

    Raises :class:`CategoriesFailed` when a category could not be rated (after the board
    and the other categories were)."""
    step = progress or _quiet
    board = get_board(board_name)
    options = fit_options(ci_method=ci_method, bootstrap_rounds=bootstrap_rounds)
    outcomes = _outcomes_read(board, step)
    snapshot = _rate(board, run, outcomes, options, step=step)
    step("write")
    failures: dict[str, Exception] = {}
    for name in category_boards(snapshot):
        try:
            _rate(board, run, outcomes.category(name), options, category=name)
        except Exception as exc:  # the other categories are still rated
            logger.exception("board %s: category %s failed", board_name, name)
            failures[name] = exc
    if outcomes.masks:
        step("categories")
    if failures:
        raise CategoriesFailed(board_name, failures)
    return snapshot


def _quiet(_label: str) -> None:
    pass


def _outcomes_read(board: Board, step: Progress) -> BoardOutcomes:
    """The board's outcomes; its online Elo is replayed unless it applied exactly as many
    outcomes as were read (counted before and after the read, as votes keep coming)."""
    applied_before = elo_applied(board.name)
    outcomes = board_outcomes_read(board)
    applied_after = elo_applied(board.name)
    step("aggregate")
    if board.ordered_outcomes is not None and not (
        applied_before <= outcomes.grouped.total <= applied_after
    ):
        online_elo_replay(board_name=board.name)
    step("online elo")
    return outcomes


def _rate(board: Board, run: RatingRun | None, outcomes: BoardOutcomes, options: FitOptions,
          *, category: str = "", step: Progress = _quiet) -> BoardSnapshot:
    """Fit one set of outcomes (the board's, or one category's) and store its snapshot."""
    numbers = board_numbers(board, outcomes, options, step)
    return snapshot_write(board_name=board.name, category=category, run=run,
                          outcomes=outcomes, numbers=numbers, options=options)


class CategoriesFailed(Exception):
    """Category boards that could not be rated (the whole board and the other categories
    were); ``keys`` name them as ``board/category``."""

    def __init__(self, board: str, failures: dict[str, Exception]) -> None:
        self.keys = [f"{board}/{category}" for category in failures]
        super().__init__("; ".join(f"category {category}: {type(exc).__name__}: {exc}"
                                   for category, exc in failures.items()))


def category_boards(snapshot: BoardSnapshot) -> list[str]:
    """The categories of a whole board's snapshot with enough votes for a board of their
    own (``ARENA_LEADERBOARD_CATEGORY_MIN_VOTES``), most voted first."""
    least = settings.ARENA_LEADERBOARD_CATEGORY_MIN_VOTES
    votes = snapshot.category_votes or {}
    return sorted((c for c, n in votes.items() if n >= least), key=lambda c: (-votes[c], c))


def ratings_run(
    *,
    trigger: str,
    boards: list[str] | None = None,
    ci_method: str | None = None,
    bootstrap_rounds: int | None = None,
    lock_wait: float = 30.0,
    progress: Progress | None = None,
) -> RatingRun:
    """Rate ``boards`` (default: all) and record the run; a board that fails is logged and
    recorded in the run (``failed_boards``, ``error``), not raised, and keeps its last
    snapshot, while the other boards are rated.

    Raises :class:`RunInProgress` (before recording anything) when another run holds a
    board's lock for longer than ``lock_wait`` seconds, and
    :class:`~leaderboard.boards.UnknownBoard` for a board that is not registered.
    """
    names = list(boards) if boards else board_names()
    for name in names:
        get_board(name)  # fail early on an unknown name
    with _board_locks(names, wait=lock_wait):
        run = RatingRun.objects.create(boards=names, trigger=trigger)
        started = time.perf_counter()
        bans_apply()  # the votes of voters banned since stop counting from this run on
        errors = [] if names else [NO_BOARDS]
        for name in names:
            # One board failing leaves the others rated and itself on its last snapshot.
            try:
                snapshot = board_recompute(
                    board_name=name,
                    run=run,
                    ci_method=ci_method,
                    bootstrap_rounds=bootstrap_rounds,
                    progress=progress,
                )
            except Exception as exc:
                logger.exception("rating run %s: the %s board failed; it keeps its last "
                                 "snapshot", run.pk, name)
                run.failed_boards.extend(getattr(exc, "keys", [name]))
                errors.append(f"{name}: {type(exc).__name__}: {exc}")
            else:
                run.outcomes_processed += snapshot.outcomes
        run.status = RunStatus.FAILED if errors else RunStatus.SUCCEEDED
        run.error = "\n".join(errors)[:2000]
        run.finished_at = timezone.now()
        run.duration_ms = int((time.perf_counter() - started) * 1000)
        run.save(update_fields=["status", "error", "finished_at", "duration_ms",
                                "outcomes_processed", "failed_boards"])
    logger.info(
        "rating run %s %s: %s outcomes in %s ms", run.pk, run.status, run.outcomes_processed,
        run.duration_ms,
    )
    return run

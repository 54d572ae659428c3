"""Writes of the leaderboard: rating runs and snapshots, debounced runs (the online Elo is
:mod:`leaderboard.runs.online_elo`).

A run reads each board's outcomes aggregated in SQL, fits them (Bradley–Terry with
sandwich or bootstrap intervals, or Glicko-2 / Elo where a board asks for it), and writes
one :class:`~leaderboard.models.BoardSnapshot` per board in one transaction. Nothing here
runs on a page request.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone

from arena.steps import batch_soon, batch_started, send_task
from leaderboard.boards import Board, board_names, board_subjects, get_board
from leaderboard.models import (
    BoardSnapshot,
    RatingRun,
    RunStatus,
    SnapshotEntry,
)
from leaderboard.ratings import parse_outcome
from leaderboard.runs import compute, scans
from leaderboard.runs.fast_insert import insert_plain
from leaderboard.runs.online_elo import elo_applied, online_elo_apply, online_elo_replay
from leaderboard.runs.style_runs import style_columns

logger = logging.getLogger(__name__)

RUN_IN_PROGRESS = "A rating run of the {board} board is already in progress; try again shortly."
NO_BOARDS = "No boards are registered, so there is nothing to rate."
BAD_CI_METHOD = "Unknown interval method {value!r}: use sandwich or bootstrap."

DEBOUNCE_KEY = "leaderboard:debounce:{board}"
LOCK_KEY = "leaderboard:running:{board}"
LOCK_TTL_SECONDS = 15 * 60

Progress = Callable[[str], None]


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


def _fit(board: Board, grouped: compute.Grouped, *, ci_method: str, rounds: int) -> compute.Fit:
    if board.primary_method == "glicko2":
        return compute.fit_glicko2(
            grouped.n, compute.period_groups(board.period_outcomes(), grouped.subjects)
        )
    if board.primary_method == "elo":
        rows = list(board.ordered_outcomes())
        index = {s: i for i, s in enumerate(grouped.subjects)}
        rows = [r for r in rows if r[0] in index and r[1] in index]
        a = np.array([index[r[0]] for r in rows], dtype=np.int64)
        b = np.array([index[r[1]] for r in rows], dtype=np.int64)
        code = np.array([parse_outcome(str(r[2])) for r in rows], dtype=np.int64)
        return compute.fit_elo(grouped.subjects, a, b, code, ci_method=None)
    return compute.fit_bt(grouped, ci_method=ci_method, rounds=rounds)


def board_recompute(
    *,
    board_name: str,
    run: RatingRun | None = None,
    ci_method: str | None = None,
    bootstrap_rounds: int | None = None,
    progress: Progress | None = None,
    category: str = "",
    grouped: compute.Grouped | None = None,
    known_subjects: dict | None = None,
) -> BoardSnapshot:
    """Aggregate, fit and snapshot one board, then each of its categories with enough votes
    (a category's run is given its ``grouped`` outcomes and the board's ``known_subjects``;
    no online Elo, no style control). The caller holds the board's lock."""
    step = progress or (lambda _label: None)
    board = get_board(board_name)
    if bootstrap_rounds is not None and bootstrap_rounds > 0:
        ci_method = ci_method or "bootstrap"
    ci_method = ci_method or settings.ARENA_LEADERBOARD_CI
    if ci_method not in compute.CI_METHODS:
        raise ValueError(BAD_CI_METHOD.format(value=ci_method))
    rounds = bootstrap_rounds or settings.ARENA_LEADERBOARD_BOOTSTRAP_ROUNDS
    min_votes = settings.ARENA_LEADERBOARD_MIN_VOTES

    applied_before = elo_applied(board_name)
    scan = position = None
    if not category and board.vote_scan is not None:
        # Not in the aggregation session: the scan is expressions over every vote, where
        # PostgreSQL's JIT (which the session turns off for the GROUP BY) saves a second.
        scan = board.vote_scan()
        groups = scans.scan_groups(scan)
        grouped, position = scans.scan_grouped(scan, groups)
    elif not category:
        with _aggregation_session():
            grouped = compute.group_rows(board.outcomes())
    applied_after = elo_applied(board_name)
    step("aggregate")
    if not category and board.ordered_outcomes is not None and not (
        applied_before <= grouped.total <= applied_after
    ):
        online_elo_replay(board_name=board_name)
    step("online elo")

    started = time.perf_counter()
    fit = _fit(board, grouped, ci_method=ci_method, rounds=rounds)
    fit_ms = int((time.perf_counter() - started) * 1000)
    step("fit")

    tally = compute.tally(grouped)
    subjects = known_subjects or board_subjects(board, grouped.subjects)
    deprecated = np.array([subjects[s].deprecated for s in grouped.subjects], dtype=bool)
    rated = tally.votes >= min_votes
    fit = compute.shrink_provisional(fit, grouped, ~rated)
    active = rated & ~deprecated
    rank_ub = compute.ranks(fit.ci_lower, fit.ci_upper, rated)
    rank_ub_active = compute.ranks(fit.ci_lower, fit.ci_upper, active)
    win_rate = tally.win_rate
    step("tally")
    style = style_columns(board, grouped, rated, active, scan, position)
    step("style control")
    plot_data = compute.plot_data(grouped, fit, rated, active,
                                  limit=settings.ARENA_LEADERBOARD_PLOT_MODELS)
    masks = scans.category_masks(scan) if scan is not None else {}
    counts = dict(board.counts()) if board.counts and not category else {}
    if category:
        counts["votes"] = grouped.total
    elif "votes" not in counts and "votes_excluded" in counts:
        counts["votes"] = grouped.total + counts["votes_excluded"]

    with transaction.atomic():
        snapshot = BoardSnapshot.objects.create(
            board=board_name,
            run=run,
            method=fit.method,
            ci_method=fit.ci_method,
            bootstrap_rounds=fit.rounds,
            min_votes=min_votes,
            outcomes=grouped.total,
            models_total=grouped.n,
            models_rated=int(rated.sum()),
            battles=counts.get("battles"),
            votes_total=counts.get("votes"),
            fit_ms=fit_ms,
            plot_data=plot_data,
            style_coefficients=style.pop("coefficients"),
            category=category,
            category_votes={name: int(mask.sum()) for name, mask in masks.items()},
        )
        insert_plain(
            SnapshotEntry,
            [
                SnapshotEntry(
                    snapshot=snapshot,
                    subject=key,
                    name=subjects[key].name,
                    organization=subjects[key].organization,
                    license=subjects[key].license,
                    deprecated=bool(deprecated[i]),
                    provisional=not bool(rated[i]),
                    rating=float(fit.rating[i]),
                    ci_lower=float(fit.ci_lower[i]),
                    ci_upper=float(fit.ci_upper[i]),
                    rank_ub=int(rank_ub[i]),
                    rank_ub_active=int(rank_ub_active[i]),
                    votes=int(tally.votes[i]),
                    wins=int(tally.wins[i]),
                    losses=int(tally.losses[i]),
                    ties=int(tally.ties[i]),
                    both_bad=int(tally.both_bad[i]),
                    win_rate=float(win_rate[i]),
                    **{name: values[i] for name, values in style.items()},
                )
                for i, key in enumerate(grouped.subjects)
            ],
        )
        _prune_snapshots(board_name, category)
    step("write")
    failures: dict[str, Exception] = {}
    for name in category_boards(snapshot):
        try:
            board_recompute(board_name=board_name, run=run, ci_method=ci_method,
                            bootstrap_rounds=bootstrap_rounds, category=name,
                            grouped=scans.scan_grouped(scan, groups, masks[name])[0],
                            known_subjects=subjects)
        except Exception as exc:  # the other categories are still rated
            logger.exception("board %s: category %s failed", board_name, name)
            failures[name] = exc
    if masks:
        step("categories")
    if failures:
        raise CategoriesFailed(board_name, failures)
    return snapshot


class CategoriesFailed(Exception):
    """Category boards that could not be rated (the whole board and the other categories
    were); ``keys`` name them as ``board/category``."""

    def __init__(self, board: str, failures: dict[str, Exception]) -> None:
        self.keys = [f"{board}/{category}" for category in failures]
        super().__init__("; ".join(f"category {category}: {type(exc).__name__}: {exc}"
                                   for category, exc in failures.items()))


@contextmanager
def _aggregation_session() -> Iterator[None]:
    """On PostgreSQL, give the big GROUP BY room to hash in memory, without JIT (which
    costs more than it saves on it); settings last for this transaction only."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL work_mem = '64MB'")
                cursor.execute("SET LOCAL jit = off")
        yield


def _prune_snapshots(board_name: str, category: str) -> None:
    keep = settings.ARENA_LEADERBOARD_KEEP_SNAPSHOTS
    old = list(
        BoardSnapshot.objects.filter(board=board_name, category=category)
        .order_by("-created_at", "-id")
        .values_list("pk", flat=True)[keep:]
    )
    if old:
        BoardSnapshot.objects.filter(pk__in=old).delete()


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

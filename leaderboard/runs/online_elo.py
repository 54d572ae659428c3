"""The online Elo: each counted outcome moves the board's Elo table at once (shown beside
the fitted ratings), and a replay rebuilds it from every outcome in order when a rating run
finds it out of step."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from leaderboard.boards import get_board
from leaderboard.models import EloBoardState, OnlineElo
from leaderboard.ratings import elo_ratings, elo_update, parse_outcome
from leaderboard.ratings.elo import INITIAL_RATING
from leaderboard.ratings.outcomes import ELO_SCORES

logger = logging.getLogger(__name__)


def online_elo_apply(
    *,
    board_name: str,
    subject_a: str,
    subject_b: str,
    winner: str,
    created_at: datetime | None = None,
) -> tuple[float, float] | None:
    """Apply one outcome to the online Elo (K = 32; both bad scores 0.25 each).

    Returns the new ``(rating_a, rating_b)``, or None when a replay already covered the
    outcome. Updates of one board are serialised by a row lock on its state row.

    It runs after every counted vote, so it is three plain statements rather than the
    ORM's seven (about 2 ms of a vote's CPU): count the outcome on the state row (which
    locks it) unless a replay covered it, read the pair's ratings, write both in one update.
    A board or subject seen for the first time takes the ORM's way once.
    """
    score_a, score_b = ELO_SCORES[parse_outcome(winner)]
    ops, now = connection.ops, timezone.now()
    state_table = ops.quote_name(EloBoardState._meta.db_table)
    elo_table = ops.quote_name(OnlineElo._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        covered = "" if created_at is None else " AND (watermark IS NULL OR watermark < %s)"
        cursor.execute(
            f"UPDATE {state_table} SET outcomes_applied = outcomes_applied + 1 "
            f"WHERE board = %s{covered}",
            [board_name] + ([] if created_at is None
                            else [ops.adapt_datetimefield_value(created_at)]))
        if cursor.rowcount == 0 and not _count_on_new_state(board_name, created_at):
            return None
        cursor.execute(
            f"SELECT subject, rating FROM {elo_table} WHERE board = %s AND subject IN (%s, %s)",
            [board_name, subject_a, subject_b])
        ratings = dict(cursor.fetchall())
        for subject in {subject_a, subject_b} - ratings.keys():
            OnlineElo.objects.create(board=board_name, subject=subject, rating=INITIAL_RATING)
            ratings[subject] = INITIAL_RATING
        rating_a, rating_b = elo_update(ratings[subject_a], ratings[subject_b], score_a, score_b)
        cursor.execute(
            f"UPDATE {elo_table} SET rating = CASE subject WHEN %s THEN %s ELSE %s END, "
            f"votes = votes + 1, updated_at = %s WHERE board = %s AND subject IN (%s, %s)",
            [subject_a, rating_a, rating_b, ops.adapt_datetimefield_value(now), board_name,
             subject_a, subject_b])
    return rating_a, rating_b


def _count_on_new_state(board_name: str, created_at: datetime | None) -> bool:
    """The state row's update matched nothing: count the outcome on a state row made now,
    unless the row exists and a replay covered the outcome (False)."""
    state = _elo_state_locked(board_name)
    if state.watermark and created_at and created_at <= state.watermark:
        return False
    state.outcomes_applied += 1
    state.save(update_fields=["outcomes_applied"])
    return True


def _elo_state_locked(board_name: str) -> EloBoardState:
    state, _ = EloBoardState.objects.select_for_update().get_or_create(board=board_name)
    return state


@dataclass
class _Ordered:
    """Outcomes in order as index arrays, and the time of the last one."""

    subjects: dict[str, int]
    a: np.ndarray
    b: np.ndarray
    code: np.ndarray
    last: datetime | None


def _read_ordered(rows, subjects: dict[str, int]) -> _Ordered:
    """Read ``(a, b, winner, time)`` rows in chunks into arrays (``subjects`` grows)."""
    codes: dict[str, int] = {}
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    last = None
    rows = iter(rows)
    while chunk := list(islice(rows, 50_000)):
        col_a, col_b, col_w, col_t = zip(*chunk, strict=True)
        for name in set(col_a) | set(col_b):
            subjects.setdefault(name, len(subjects))
        for winner in set(col_w) - codes.keys():
            codes[winner] = parse_outcome(str(winner))
        n = len(chunk)
        parts.append((
            np.fromiter(map(subjects.__getitem__, col_a), np.int64, n),
            np.fromiter(map(subjects.__getitem__, col_b), np.int64, n),
            np.fromiter(map(codes.__getitem__, col_w), np.int64, n),
        ))
        last = col_t[-1]
    if last is not None and not isinstance(last, datetime):
        last = datetime.fromtimestamp(float(last), tz=UTC)
    if parts:
        a, b, code = (np.concatenate(column) for column in zip(*parts, strict=True))
    else:
        a = b = code = np.zeros(0, dtype=np.int64)
    return _Ordered(subjects, a, b, code, last)


def online_elo_replay(*, board_name: str) -> int:
    """Rebuild a board's online Elo by replaying its counted outcomes in order.

    The long part (reading and replaying every outcome) runs without holding the board's
    Elo lock, so votes are not kept waiting; under the lock only the outcomes that came
    after the read are replayed on top, and the table is replaced.
    """
    board = get_board(board_name)
    if board.ordered_outcomes is None:
        return 0
    base = _read_ordered(board.ordered_outcomes(), {})
    ratings = elo_ratings(base.a, base.b, base.code, len(base.subjects))
    with transaction.atomic():
        state = _elo_state_locked(board_name)
        subjects = dict(base.subjects)
        if base.last is None:
            none = np.zeros(0, dtype=np.int64)
            tail = _Ordered(subjects, none, none, none, None)
        else:  # outcomes committed while the base was read
            tail = _read_ordered(board.ordered_outcomes(since=base.last), subjects)
        n = len(subjects)
        start = np.full(n, INITIAL_RATING)
        start[: ratings.size] = ratings
        ratings = elo_ratings(tail.a, tail.b, tail.code, n, initial=start)
        a_idx = np.concatenate([base.a, tail.a])
        b_idx = np.concatenate([base.b, tail.b])
        votes = np.bincount(a_idx, minlength=n) + np.bincount(b_idx, minlength=n)
        OnlineElo.objects.filter(board=board_name).delete()
        OnlineElo.objects.bulk_create(
            [
                OnlineElo(
                    board=board_name, subject=s, rating=float(ratings[i]), votes=int(votes[i])
                )
                for s, i in subjects.items()
            ],
            batch_size=1000,
        )
        state.watermark = tail.last or base.last
        state.outcomes_applied = int(a_idx.size)
        state.replayed_at = timezone.now()
        state.save()
    logger.info("online Elo of %s replayed from %d outcomes", board_name, a_idx.size)
    return int(a_idx.size)


def elo_applied(board_name: str) -> int:
    return (
        EloBoardState.objects.filter(board=board_name)
        .values_list("outcomes_applied", flat=True)
        .first()
        or 0
    )

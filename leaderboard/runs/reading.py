"""What a rating run reads of a board, in one place before anything is fitted: its counted
outcomes grouped by pair and result, the rows its method needs besides (Glicko-2's rating
periods, Elo's order), its counts, and who its subjects are.

A board with a vote scan is read once, as arrays (:mod:`leaderboard.scans`), and grouped
here in NumPy: the whole board, and each category board from the same read
(:meth:`BoardOutcomes.category`). Any other board is grouped by SQL's ``GROUP BY``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
from django.db import connection, transaction

from arena.prompt_categories import CATEGORY_BITS, LANGUAGE_PREFIX
from leaderboard.boards import Board, Subject, board_subjects
from leaderboard.runs import compute
from leaderboard.scans import VoteScan, language_code


class ScanGroups(NamedTuple):
    """The scan's votes grouped once by (a, b, result): ``inverse[i]`` is vote i's group."""

    a: np.ndarray
    b: np.ndarray
    code: np.ndarray
    inverse: np.ndarray


@dataclass
class BoardOutcomes:
    """One board's outcomes as a run reads them (or one of its categories', from the same
    read)."""

    grouped: compute.Grouped
    subjects: dict[str, Subject]  # display data of every subject of the whole board
    counts: dict[str, int]  # ``battles`` and ``votes`` of the snapshot (either may be absent)
    periods: list | None = None  # (period, a, b, winner, count) rows: a Glicko-2 board
    ordered: list | None = None  # (a, b, winner, time) rows in order: an Elo board
    scan: VoteScan | None = None  # the votes with their style, when the board has a scan
    groups: ScanGroups | None = None
    position: np.ndarray | None = None  # per scan subject, its index in ``grouped`` (-1: absent)
    masks: dict[str, np.ndarray] = field(default_factory=dict)  # category -> votes it marks

    def category(self, name: str) -> BoardOutcomes:
        """The outcomes of one category (no scan: no style control on a category board)."""
        grouped = scan_grouped(self.scan, self.groups, self.masks[name])[0]
        return replace(self, grouped=grouped, counts={"votes": grouped.total}, scan=None,
                       groups=None, position=None, masks={})


def board_outcomes_read(board: Board) -> BoardOutcomes:
    scan = groups = position = None
    if board.vote_scan is not None:
        # Not in the aggregation session: the scan is expressions over every vote, where
        # PostgreSQL's JIT (which the session turns off for the GROUP BY) saves a second.
        scan = board.vote_scan()
        groups = scan_groups(scan)
        grouped, position = scan_grouped(scan, groups)
    else:
        with _aggregation_session():
            grouped = compute.group_rows(board.outcomes())
    counts = dict(board.counts()) if board.counts else {}
    if "votes" not in counts and "votes_excluded" in counts:
        counts["votes"] = grouped.total + counts["votes_excluded"]
    return BoardOutcomes(
        grouped=grouped,
        subjects=board_subjects(board, grouped.subjects),
        counts=counts,
        periods=list(board.period_outcomes()) if board.primary_method == "glicko2" else None,
        ordered=list(board.ordered_outcomes()) if board.primary_method == "elo" else None,
        scan=scan, groups=groups, position=position,
        masks=category_masks(scan) if scan is not None else {},
    )


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


def scan_groups(scan: VoteScan) -> ScanGroups:
    n = len(scan.subjects)
    keys, inverse = np.unique((scan.a * n + scan.b) * 4 + scan.code, return_inverse=True)
    return ScanGroups(keys // 4 // n, keys // 4 % n, keys % 4, inverse.ravel())


def scan_grouped(scan: VoteScan, groups: ScanGroups,
                 keep: np.ndarray | None = None) -> tuple[compute.Grouped, np.ndarray]:
    """The outcomes (those ``keep`` marks) grouped by (a, b, result), over the subjects
    that took part; and, per scan subject, its index there (−1: absent)."""
    counts = np.bincount(groups.inverse if keep is None else groups.inverse[keep],
                         minlength=groups.a.size)
    used = counts > 0
    ga, gb, gc = groups.a[used], groups.b[used], groups.code[used]
    present = np.unique(np.r_[ga, gb])
    position = np.full(len(scan.subjects), -1, dtype=np.int64)
    position[present] = np.arange(present.size)
    grouped = compute.Grouped([scan.subjects[i] for i in present], position[ga], position[gb],
                              gc, counts[used].astype(np.int64))
    return grouped, position


def category_masks(scan: VoteScan) -> dict[str, np.ndarray]:
    """Each category and language the votes have, with the votes it marks."""
    masks = {name: (scan.categories & bit) != 0 for name, bit in CATEGORY_BITS.items()}
    for number in np.unique(scan.language):
        if number:
            masks[LANGUAGE_PREFIX + language_code(int(number))] = scan.language == number
    return {name: mask for name, mask in masks.items() if mask.any()}

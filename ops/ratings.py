"""How settled each board's ratings are: how far its models moved between its last two
rating runs, how its top ranks changed, and its typical uncertainty over its last runs
(Glicko-2's RD on a Glicko-2 board; elsewhere the standard error, the 95% interval's
half-width over 1.96: the same scale). Read from the snapshots the runs wrote."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from statistics import median

from arena.contests.proportions import Z95
from leaderboard.boards import boards
from leaderboard.models import BoardSnapshot, SnapshotEntry

RUNS = 12  # the runs of a board the page looks at
TOP = 10  # "the top ranks"


@dataclass(frozen=True)
class RunPoint:
    at: datetime
    uncertainty: float | None  # the median RD (or standard error) of the rated models


@dataclass(frozen=True)
class Entry:
    name: str
    rating: float
    rank: int  # rank (UB) among the rated; 0: provisional
    half_width: float


@dataclass(frozen=True)
class BoardStability:
    board: str
    title: str
    method: str  # of its latest run: bt, elo, glicko2
    runs: list[RunPoint]  # oldest first
    compared: int = 0  # rated models in both of the last two runs
    mean_move: float | None = None  # their mean |rating change|
    max_move: float | None = None
    max_mover: str = ""
    rank_changes: int = 0  # models of the latest top TOP whose rank changed (or are new)
    entered_top: tuple[str, ...] = ()  # ... that were not in the previous top TOP

    @property
    def has_uncertainty(self) -> bool:
        """Whether any of its runs rated a model (else there is nothing to plot)."""
        return any(p.uncertainty is not None for p in self.runs)

    @property
    def uncertainty_label(self) -> str:
        return "RD" if self.method == "glicko2" else "standard error"


def _entries(snapshot_ids: list[int]) -> dict[int, dict[str, Entry]]:
    found: dict[int, dict[str, Entry]] = defaultdict(dict)
    rows = SnapshotEntry.objects.filter(snapshot_id__in=snapshot_ids).values_list(
        "snapshot_id", "subject", "name", "rating", "ci_lower", "ci_upper", "provisional",
        "rank_ub")
    for snapshot_id, subject, name, rating, lower, upper, provisional, rank in rows:
        found[snapshot_id][subject] = Entry(name, rating, 0 if provisional else rank,
                                            (upper - lower) / 2)
    return found


def _top(entries: dict[str, Entry]) -> dict[str, int]:
    """Subject → rank of the rated models ranked within TOP."""
    return {s: e.rank for s, e in entries.items() if 0 < e.rank <= TOP}


def board_stability(*, board: str, title: str) -> BoardStability | None:
    """None while the board has no run."""
    snapshots = list(BoardSnapshot.objects.filter(board=board, category="")
                     .order_by("-created_at", "-id").values_list("id", "created_at", "method")
                     [:RUNS])
    if not snapshots:
        return None
    entries = _entries([s[0] for s in snapshots])
    runs = []
    for snapshot_id, at, _method in reversed(snapshots):
        widths = [e.half_width / Z95 for e in entries[snapshot_id].values() if e.rank]
        runs.append(RunPoint(at, median(widths) if widths else None))
    stability = BoardStability(board, title, snapshots[0][2], runs)
    if len(snapshots) < 2:
        return stability
    latest, previous = entries[snapshots[0][0]], entries[snapshots[1][0]]
    moves = {s: abs(e.rating - previous[s].rating) for s, e in latest.items()
             if e.rank and s in previous and previous[s].rank}
    top_now, top_before = _top(latest), _top(previous)
    mover = max(moves, key=moves.__getitem__) if moves else ""
    return BoardStability(
        board, title, stability.method, runs, compared=len(moves),
        mean_move=sum(moves.values()) / len(moves) if moves else None,
        max_move=moves[mover] if moves else None,
        max_mover=latest[mover].name if mover else "",
        rank_changes=sum(1 for s, rank in top_now.items() if top_before.get(s) != rank),
        entered_top=tuple(sorted(latest[s].name for s in top_now if s not in top_before)))


def boards_stability() -> list[tuple[str, str, BoardStability | None]]:
    """Every registered board in tab order: (name, title, its stability or None)."""
    return [(b.name, b.title, board_stability(board=b.name, title=b.title)) for b in boards()]

"""What a model's page (``/models/<id>/``) and ``GET /api/models/{id}`` show: the model's
card, its standing on every board, its record against each opponent, its public battles.

Reads only: snapshots for the ratings (no fitting here), one ``GROUP BY`` over the model's
own outcomes per board for its record, and each board's ``recent`` for the battles.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from arena.contests.proportions import Z95
from arena.models import AIModel
from arena.prompt_categories import category_title
from arena.selectors import model_with_availability
from leaderboard.boards import (
    Board,
    Recent,
    board_model_section,
    board_subjects,
    boards,
    outcome_for,
)
from leaderboard.models import BoardSnapshot, SnapshotEntry
from leaderboard.pages.selectors import online_elo_map, snapshot_latest

RECENT_LIMIT = 10


@dataclass
class Opponent:
    subject: str
    name: str
    won: int = 0
    lost: int = 0
    tie: int = 0
    both_bad: int = 0

    @property
    def votes(self) -> int:
        return self.won + self.lost + self.tie + self.both_bad

    @property
    def win_rate(self) -> float:
        """Wins over every vote against this opponent (ties and both-bad count as votes)."""
        return self.won / self.votes if self.votes else 0.0


@dataclass(frozen=True)
class CategoryStanding:
    """The model on one category board of a board (its entry in the latest snapshot)."""

    category: str
    title: str
    entry: SnapshotEntry


@dataclass
class Standing:
    """The model on one board: its latest snapshot entry (None: not rated there yet)."""

    board: Board
    entry: SnapshotEntry | None
    elo: float | None
    opponents: list[Opponent] = field(default_factory=list)
    categories: list[CategoryStanding] = field(default_factory=list)

    @property
    def rd(self) -> float | None:
        """Glicko-2's rating deviation (its interval is ± 1.96 RD); None elsewhere."""
        e = self.entry
        if e is None or e.volatility is None:
            return None
        return (e.ci_upper - e.rating) / Z95

    @property
    def votes_since(self) -> int:
        """Votes in the record against each opponent (read now) that the rating (from the
        latest run) does not count yet."""
        counted = self.entry.votes if self.entry else 0
        return max(sum(o.votes for o in self.opponents) - counted, 0)


@dataclass(frozen=True)
class BoardExtra:
    """What a board adds about the model (``Board.model_section``)."""

    board: Board
    template: str
    context: dict
    data: dict


@dataclass
class ModelPage:
    model: AIModel
    available: bool
    standings: list[Standing]
    recent: list[Recent]
    extras: list[BoardExtra] = field(default_factory=list)


def model_page(*, model_id: str) -> ModelPage | None:
    """Everything the page shows of one model of the registry; None for an unknown id."""
    found = model_with_availability(model_id)
    if found is None:
        return None
    model, availability = found
    standings = [_standing(board, model.slug) for board in boards()
                 if board.subjects is None]  # boards whose subjects are registry models
    recent: list[Recent] = []
    for board in boards():
        if board.recent is not None:
            recent.extend(board.recent(model.slug, RECENT_LIMIT))
    recent.sort(key=lambda item: item.when, reverse=True)
    extras = [BoardExtra(board, *found) for board in boards()
              if (found := board_model_section(board, model.slug)) is not None]
    return ModelPage(model, availability.available, standings, recent[:RECENT_LIMIT], extras)


def _standing(board: Board, subject: str) -> Standing:
    snapshot = snapshot_latest(board=board.name)
    entry = snapshot.entries.filter(subject=subject).first() if snapshot else None
    return Standing(board, entry, online_elo_map(board=board.name).get(subject),
                    _opponents(board, subject), _categories(board, subject))


def _categories(board: Board, subject: str) -> list[CategoryStanding]:
    """The model's entries on the latest snapshot of each category board it is on, in the
    order of the category's votes."""
    latest: dict[str, int] = {}
    for pk, category in (BoardSnapshot.objects.filter(board=board.name).exclude(category="")
                         .order_by("-created_at", "-id").values_list("pk", "category")):
        latest.setdefault(category, pk)
    if not latest:
        return []
    entries = {e.snapshot_id: e for e in SnapshotEntry.objects.select_related("snapshot")
               .filter(snapshot_id__in=latest.values(), subject=subject)}
    found = [CategoryStanding(c, category_title(c), entries[pk])
             for c, pk in latest.items() if pk in entries]
    return sorted(found, key=lambda s: (-s.entry.snapshot.outcomes, s.category))


def _opponents(board: Board, subject: str) -> list[Opponent]:
    """The model's record against each opponent on ``board``, most-played first."""
    rows = (board.subject_outcomes(subject) if board.subject_outcomes is not None
            else (r for r in board.outcomes() if subject in r[:2]))
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for subject_a, subject_b, winner, n in rows:
        other = subject_b if subject_a == subject else subject_a
        counts[other][outcome_for(subject, subject_a, winner).replace(" ", "_")] += n
    names = board_subjects(board, list(counts))
    opponents = [Opponent(key, names[key].name, **tally) for key, tally in counts.items()]
    return sorted(opponents, key=lambda o: (-o.votes, o.name))

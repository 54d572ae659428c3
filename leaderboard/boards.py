"""The board registry: every source of pairwise outcomes the leaderboard rates.

A mode declares its boards in its own ``<app>/boards.py`` and calls
:func:`register_board`; :class:`leaderboard.apps.LeaderboardConfig` imports every
installed app's ``boards`` module at start-up (``autodiscover_modules("boards")``), so
the leaderboard never imports a mode.

A board is usually built from the queryset of its counted outcomes and the pair of fields
that name its two subjects, ``Board.from_queryset(queryset, pair=..., name=..., ...)``: the
queryset has a ``winner`` (``model_a``, ``model_b``, ``tie`` or ``both_bad``, a field or an
annotation) and a ``created_at``, and the board reads it in every way below
(:mod:`leaderboard.querysets`). The names are resolved when the board is built, so a board
that names a missing field fails at start-up, not at its first run.

A board's functions return plain rows, never model instances:

* ``outcomes()`` — required: ``(subject_a, subject_b, winner, count)`` rows from one
  ``GROUP BY`` query over the counted outcomes (pair and result), ``winner`` one of
  ``model_a``, ``model_b``, ``tie``, ``both_bad``.
* ``ordered_outcomes(since=None)`` — optional: ``(subject_a, subject_b, winner, time)``
  per outcome in the order they happened, only those after ``since`` (a datetime) when
  given; time is a datetime or POSIX seconds. Replays the online Elo.
* ``period_outcomes()`` — optional: ``(period, subject_a, subject_b, winner, count)``
  grouped by rating period (any value that sorts and compares, e.g. the day number of
  :func:`leaderboard.querysets.period_outcomes`); needed when the primary method is
  Glicko-2.
* ``export_rows()`` — optional: dicts with at least ``model_a``, ``model_b``,
  ``winner`` (plus ids and timestamps) in outcome order, for ``export_votes``.
* ``counts()`` — optional, for the stats: ``battles`` (all of them) and either ``votes``
  or ``votes_excluded`` (those that do not count; the run adds the counted outcomes it
  already has).
* ``subjects(keys)`` — optional: display data per subject; by default subjects are
  :class:`arena.models.AIModel` slugs.
* ``subject_outcomes(subject)`` — optional: the ``outcomes()`` rows of one subject only
  (a model's page); without it they are picked from ``outcomes()``.
* ``vote_scan()`` — optional: every counted outcome with each side's style, its categories
  and language, as a :class:`~leaderboard.scans.VoteScan` (see
  :func:`leaderboard.scans.vote_scan`). With it a run reads the outcomes once, from it:
  the board, a board per category (``coding``, ``lang-en``...; titles from
  :mod:`arena.prompt_categories`) with at least ``ARENA_LEADERBOARD_CATEGORY_MIN_VOTES``
  votes, and, for a Bradley–Terry board, the style-controlled fit.
* ``recent(subject, limit)`` — optional: :class:`Recent` items, newest first, that anyone
  may open (a voted battle, never one still blind), for the subject's page.
* ``metrics`` — optional: the dotted path of a callable returning figures of the board's
  own per subject, ``{subject: {figure: value or None}}``, shown and sortable beside its
  ratings (the page's table, ``GET /api/leaderboard``); the figures the API names are
  ``controversy_index`` and ``avg_factuality`` (seed 004's leaderboard entry), sorted by with
  ``sort=controversy`` and ``sort=factuality``.
* ``section`` — optional: the dotted path of a callable returning ``(template, context)``,
  a section of the board's own shown under its table (e.g. the debates' crowd and AI
  ratings side by side).
* ``model_section`` — optional: the dotted path of a callable taking a registry model's id
  and returning ``(template, context, data)`` or None, what the board adds about that model
  on its page (``/models/<id>/``) and, as ``data``, in ``GET /api/models/{id}`` (e.g. the
  voice agents built on the model, with their win rates per dimension).
* ``signal`` + ``outcome_from_signal(**kwargs)`` — optional: a Django signal sent when
  an outcome is committed and a function turning its kwargs into ``(subject_a,
  subject_b, winner, created_at)`` (or ``None`` when the outcome does not count). The
  leaderboard connects to it to update the online Elo at once and to schedule a
  debounced rating run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from django.core.exceptions import FieldError
from django.db.models import QuerySet
from django.dispatch import Signal
from django.utils.module_loading import import_string

from arena.models import AIModel, ModelStatus
from leaderboard import querysets
from leaderboard.querysets import OrderedRow, OutcomeRow, PeriodRow, Rows

logger = logging.getLogger(__name__)

METHODS = ("bt", "elo", "glicko2")
# The subjects of most boards: the two models of a battle, debate or panel outcome.
MODEL_PAIR = {"model_a": "model_a_id", "model_b": "model_b_id"}

UNKNOWN_BOARD = "Unknown board {name!r}: use one of {names}."
BAD_PAIR = "board {name}: pair must name model_a and model_b, not {keys}"


@dataclass(frozen=True)
class Subject:
    """What a board row shows about the thing being rated."""

    key: str
    name: str
    organization: str = ""
    license: str = ""
    deprecated: bool = False


class ScanColumns(NamedTuple):
    """Where a board's outcome rows keep what a scan reads besides the pair and the result."""

    style: tuple[str, ...]  # side a's tokens, headers, lists and bold, then side b's
    categories: str  # the category bits (arena.prompt_categories.CATEGORY_BITS)
    language: str  # the language code

    def names(self) -> tuple[str, ...]:
        return (*self.style, self.categories, self.language)


class Recent(NamedTuple):
    """One public item a subject took part in, as its page lists it."""

    title: str
    url: str
    when: datetime
    result: str  # "won", "lost", "tie" or "both bad", from the subject's side


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    outcomes: Callable[[], Iterable[OutcomeRow]]
    description: str = ""
    primary_method: str = "bt"
    ordered_outcomes: Callable[..., Iterable[OrderedRow]] | None = None
    period_outcomes: Callable[[], Iterable[PeriodRow]] | None = None
    export_rows: Callable[[], Iterable[Mapping[str, Any]]] | None = None
    counts: Callable[[], Mapping[str, int]] | None = None
    subjects: Callable[[list[str]], Mapping[str, Subject]] | None = None
    subject_outcomes: Callable[[str], Iterable[OutcomeRow]] | None = None
    recent: Callable[[str, int], Iterable[Recent]] | None = None
    vote_scan: Callable[[], Any] | None = None
    signal: Signal | None = None
    outcome_from_signal: Callable[..., OrderedRow | None] | None = None
    metrics: str | None = None
    section: str | None = None
    model_section: str | None = None
    order: int = 100  # tab order on the page, lowest first
    # Where a person adds to this board, as (label, URL): an empty board's way in.
    play: tuple[str, str] = ("Start a battle", "/battle/")

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"board name {self.name!r}: use letters, digits, - and _")
        if self.primary_method not in METHODS:
            raise ValueError(f"board {self.name}: primary_method must be one of {METHODS}")
        if self.primary_method == "glicko2" and self.period_outcomes is None:
            raise ValueError(f"board {self.name}: Glicko-2 needs period_outcomes")
        if self.primary_method == "elo" and self.ordered_outcomes is None:
            raise ValueError(f"board {self.name}: Elo as primary needs ordered_outcomes")
        if (self.signal is None) != (self.outcome_from_signal is None):
            raise ValueError(f"board {self.name}: give both signal and outcome_from_signal")

    @classmethod
    def from_queryset(
        cls,
        counted: QuerySet | Rows,
        *,
        name: str,
        title: str,
        pair: Mapping[str, str] = MODEL_PAIR,
        contests: QuerySet | Rows | None = None,
        uncounted: QuerySet | Rows | None = None,
        export: Mapping[str, str] | None = None,
        scan: ScanColumns | None = None,
        **functions: Any,
    ) -> Board:
        """The board of the outcomes ``counted`` holds (a queryset, or a function returning
        one when what counts depends on a setting), between the subjects its ``pair``
        fields name (``{"model_a": field, "model_b": field}``).

        Built from them: ``outcomes``, ``subject_outcomes``, ``ordered_outcomes``,
        ``period_outcomes`` and ``export_rows`` (the pair, the winner, ``export``'s columns
        as ``{column: field}``, and the time). With ``contests`` (every battle, panel or
        debate of the board's kind) the ``counts``: those, and ``uncounted``'s outcomes as
        ``votes_excluded`` or, without it, the counted ones as ``votes``. With ``scan`` (the
        columns of each vote's style, categories and language) a ``vote_scan`` over the
        registry's models. ``functions`` give the rest of the contract (``description``,
        ``signal``...) and may replace any of these.
        """
        if set(pair) != {"model_a", "model_b"}:
            raise ValueError(BAD_PAIR.format(name=name, keys=sorted(pair)))
        rows = querysets.fresh(counted)
        named = [*pair.values(), "winner", "created_at", *(export or {}).values(),
                 *(scan.names() if scan else ())]
        try:
            rows().values_list(*named)  # resolves every name now; runs no query
        except FieldError as exc:
            raise ValueError(f"board {name}: {exc}") from None
        built: dict[str, Any] = {
            "outcomes": lambda: querysets.grouped_outcomes(rows(), **pair),
            "subject_outcomes": lambda subject: querysets.subject_grouped_outcomes(
                rows(), subject, **pair),
            "ordered_outcomes": lambda since=None: querysets.ordered_outcomes(
                rows(), since=since, **pair),
            "period_outcomes": lambda: querysets.period_outcomes(rows(), **pair),
            "export_rows": lambda: querysets.exported_rows(rows(), columns=export or {},
                                                           **pair),
        }
        if contests is not None:
            every = querysets.fresh(contests)
            left_out = None if uncounted is None else querysets.fresh(uncounted)
            built["counts"] = lambda: querysets.contest_counts(every, rows, left_out)
        if scan is not None:
            def scanned():
                from leaderboard.scans import vote_scan  # noqa: PLC0415 - NumPy: runs only

                return vote_scan(rows(), list(AIModel.objects.values_list("slug", flat=True)),
                                 **pair, **scan._asdict())

            built["vote_scan"] = scanned
        return cls(name=name, title=title, **(built | functions))


def outcome_for(subject: str, subject_a: str, winner: str) -> str:
    """An outcome as ``subject`` lived it: "won", "lost", "tie" or "both bad"."""
    if winner in ("tie", "both_bad"):
        return winner.replace("_", " ")
    return "won" if (winner == "model_a") == (subject == subject_a) else "lost"



class UnknownBoard(LookupError):
    pass


_registry: dict[str, Board] = {}


def board_metrics(board: Board) -> Mapping[str, Mapping[str, float | None]]:
    """The board's own figures per subject (see ``Board.metrics``), empty without any."""
    return import_string(board.metrics)() if board.metrics else {}


def board_section(board: Board) -> tuple[str, dict] | None:
    """The board's own section (see ``Board.section``): ``(template, context)`` or None."""
    if not board.section:
        return None
    return import_string(board.section)()


def board_model_section(board: Board, model_id: str) -> tuple[str, dict, dict] | None:
    """What the board adds to a model's page (see ``Board.model_section``), or None."""
    if not board.model_section:
        return None
    return import_string(board.model_section)(model_id)


def register_board(board: Board) -> Board:
    """Add (or replace, on re-import) a board; return it."""
    if board.name in _registry and _registry[board.name] is not board:
        logger.debug("board %s registered again: replacing", board.name)
    _registry[board.name] = board
    return board


def unregister_board(name: str) -> None:
    _registry.pop(name, None)


def board_names() -> list[str]:
    return [b.name for b in boards()]


def boards() -> list[Board]:
    """Every registered board in tab order."""
    return sorted(_registry.values(), key=lambda b: (b.order, b.name))


def get_board(name: str) -> Board:
    try:
        return _registry[name]
    except KeyError:
        names = ", ".join(board_names()) or "(none registered)"
        raise UnknownBoard(UNKNOWN_BOARD.format(name=name, names=names)) from None


def default_subjects(keys: list[str]) -> dict[str, Subject]:
    """Subjects that are AI models of the registry (``arena.AIModel``, by slug)."""
    found = {
        m.slug: Subject(
            key=m.slug,
            name=m.name,
            organization=m.organization,
            license=m.license,
            deprecated=m.status == ModelStatus.DEPRECATED,
        )
        for m in AIModel.objects.filter(slug__in=keys).only(
            "slug", "name", "organization", "license", "status"
        )
    }
    return {key: found.get(key) or Subject(key=key, name=key) for key in keys}


def board_subjects(board: Board, keys: list[str]) -> dict[str, Subject]:
    lookup = board.subjects or default_subjects
    got = dict(lookup(keys))
    return {key: got.get(key) or Subject(key=key, name=key) for key in keys}

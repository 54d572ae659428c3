"""The board registry: every source of pairwise outcomes the leaderboard rates.

A mode declares its boards in its own ``<app>/boards.py`` and calls
:func:`register_board`; :class:`leaderboard.apps.LeaderboardConfig` imports every
installed app's ``boards`` module at start-up (``autodiscover_modules("boards")``), so
the leaderboard never imports a mode.

A board's functions return plain rows, never model instances:

* ``outcomes()`` — required: ``(subject_a, subject_b, winner, count)`` rows from one
  ``GROUP BY`` query over the counted outcomes (pair and result), ``winner`` one of
  ``model_a``, ``model_b``, ``tie``, ``both_bad``.
* ``ordered_outcomes(since=None)`` — optional: ``(subject_a, subject_b, winner, time)``
  per outcome in the order they happened, only those after ``since`` (a datetime) when
  given; time is a datetime or POSIX seconds. Replays the online Elo.
* ``period_outcomes()`` — optional: ``(period, subject_a, subject_b, winner, count)``
  grouped by rating period (any value that sorts and compares, e.g. the day number of
  :func:`period_outcomes`); needed when the primary method is Glicko-2.
* ``export_rows()`` — optional: dicts with at least ``model_a``, ``model_b``,
  ``winner`` (plus ids and timestamps) in outcome order, for ``export_votes``.
* ``counts()`` — optional, for the stats: ``battles`` (all of them) and either ``votes``
  (all, counted or not) or ``votes_excluded`` (those that do not count; the run adds
  the counted outcomes it already has).
* ``subjects(keys)`` — optional: display data per subject; by default subjects are
  :class:`arena.models.AIModel` slugs.
* ``subject_outcomes(subject)`` — optional: the ``outcomes()`` rows of one subject only
  (a model's page); without it they are picked from ``outcomes()``.
* ``vote_scan()`` — optional: every counted outcome with each side's style, its categories
  and language, as a :class:`~leaderboard.runs.scans.VoteScan` (see :func:`leaderboard.runs.scans.
  vote_scan`). With it a run reads the outcomes once, from it: the board, a board per
  category (``coding``, ``lang-en``...; titles from :mod:`arena.prompt_categories`) with
  at least ``ARENA_LEADERBOARD_CATEGORY_MIN_VOTES`` votes, and, for a Bradley–Terry board,
  the style-controlled fit.
* ``recent(subject, limit)`` — optional: :class:`Recent` items, newest first, that anyone
  may open (a voted battle, never one still blind), for the subject's page.
* ``section`` — optional: the dotted path of a callable returning ``(template, context)``,
  a section of the board's own shown under its table (e.g. the debates' crowd and AI
  ratings side by side).
* ``signal`` + ``outcome_from_signal(**kwargs)`` — optional: a Django signal sent when
  an outcome is committed and a function turning its kwargs into ``(subject_a,
  subject_b, winner, created_at)`` (or ``None`` when the outcome does not count). The
  leaderboard connects to it to update the online Elo at once and to schedule a
  debounced rating run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from django.db.models import Func, IntegerField
from django.dispatch import Signal

logger = logging.getLogger(__name__)

METHODS = ("bt", "elo", "glicko2")
WINNERS = ("model_a", "model_b", "tie", "both_bad")

OutcomeRow = tuple[str, str, str, int]
OrderedRow = tuple[str, str, str, datetime | float]
PeriodRow = tuple[int | datetime, str, str, str, int]

UNKNOWN_BOARD = "Unknown board {name!r}: use one of {names}."


@dataclass(frozen=True)
class Subject:
    """What a board row shows about the thing being rated."""

    key: str
    name: str
    organization: str = ""
    license: str = ""
    deprecated: bool = False


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
    section: str | None = None
    order: int = 100  # tab order on the page, lowest first
    extra: Mapping[str, Any] = field(default_factory=dict)

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


def grouped_outcomes(queryset, *, model_a: str, model_b: str) -> Iterable[OutcomeRow]:
    """``(subject_a, subject_b, winner, count)`` rows from one ``GROUP BY`` over the pair.

    A ``COUNT(*) FILTER`` per result gives the same numbers as grouping by (pair, result)
    with a quarter of the groups, which halves the query on large tables. ``queryset``
    holds the counted outcomes and has a ``winner`` field; ``model_a``/``model_b`` name
    the fields (or lookups) of the two subjects. Rows with a zero count are left out.
    """
    from django.db.models import Count, Q

    rows = (
        queryset.values_list(model_a, model_b)
        .annotate(**{f"n_{w}": Count("pk", filter=Q(winner=w)) for w in WINNERS})
        .order_by()
    )
    for subject_a, subject_b, *counts in rows:
        for winner, n in zip(WINNERS, counts, strict=True):
            if n:
                yield subject_a, subject_b, winner, n


def subject_grouped_outcomes(queryset, subject: str, *, model_a: str,
                             model_b: str) -> Iterable[OutcomeRow]:
    """:func:`grouped_outcomes` of the rows where ``subject`` is either side."""
    from django.db.models import Q

    mine = queryset.filter(Q(**{model_a: subject}) | Q(**{model_b: subject}))
    return grouped_outcomes(mine, model_a=model_a, model_b=model_b)


def exported_rows(queryset, *, model_a: str, model_b: str, id_field: str,
                  id_column: str) -> Iterable[dict[str, Any]]:
    """``export_rows()`` of a board with one outcome per row: ``model_a``, ``model_b``,
    ``winner``, ``id_column`` (the row's ``id_field``, as text) and ``created_at``, oldest
    first."""
    columns = ("model_a", "model_b", "winner", id_column, "created_at")
    rows = queryset.order_by("created_at").values_list(model_a, model_b, "winner", id_field,
                                                       "created_at")
    for subject_a, subject_b, winner, key, created_at in rows.iterator(chunk_size=20_000):
        yield dict(zip(columns, (subject_a, subject_b, winner, str(key), created_at),
                       strict=True))


def outcome_for(subject: str, subject_a: str, winner: str) -> str:
    """An outcome as ``subject`` lived it: "won", "lost", "tie" or "both bad"."""
    if winner in ("tie", "both_bad"):
        return winner.replace("_", " ")
    return "won" if (winner == "model_a") == (subject == subject_a) else "lost"


def ordered_outcomes(queryset, *, model_a: str, model_b: str, since=None):
    """``(subject_a, subject_b, winner, time)`` per counted outcome, oldest first (after
    ``since``); ``queryset`` has ``winner`` and ``created_at`` fields.

    On PostgreSQL the time is POSIX seconds (a float) read straight from a client-side
    cursor: for a million rows that is several times faster than ``.iterator()`` with
    Django's per-row converters, and a float needs no datetime built in Python.
    """
    from django.db import connection
    from django.db.models import FloatField
    from django.db.models.functions import Cast, Extract

    rows = queryset.order_by("created_at", "pk")
    if since is not None:
        rows = rows.filter(created_at__gt=since)
    columns = (model_a, model_b, "winner")
    if connection.vendor != "postgresql":
        return rows.values_list(*columns, "created_at").iterator(chunk_size=50_000)
    rows = rows.annotate(ts=Cast(Extract("created_at", "epoch"), FloatField()))
    return _fetch_plain(rows.values_list(*columns, "ts"))


def _fetch_plain(queryset):
    from django.db import connection

    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while chunk := cursor.fetchmany(50_000):
            yield from chunk


class DayNumber(Func):
    """The UTC day of a datetime as a whole number (days since 1970-01-01), in SQL: Django's
    ``TruncDay`` calls back into Python for every row on SQLite and builds a datetime for
    each, which took most of a 1,000-debate Glicko-2 run."""

    output_field = IntegerField()

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, **extra,
                           template="CAST(julianday(%(expressions)s) - 2440587.5 AS INTEGER)")

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, **extra,
                           template="FLOOR(EXTRACT(EPOCH FROM %(expressions)s) / 86400)::int")


def period_outcomes(queryset, *, model_a: str, model_b: str):
    """``(day, subject_a, subject_b, winner, count)``: outcomes grouped by UTC day (a day
    number), the Glicko-2 rating period (seed 004: 24 hours)."""
    from django.db.models import Count

    return (
        queryset.annotate(period=DayNumber("created_at"))
        .values_list("period", model_a, model_b, "winner")
        .annotate(n=Count("pk"))
        .order_by("period")
    )


class UnknownBoard(LookupError):
    pass


_registry: dict[str, Board] = {}


def board_section(board: Board) -> tuple[str, dict] | None:
    """The board's own section (see ``Board.section``): ``(template, context)`` or None."""
    if not board.section:
        return None
    from django.utils.module_loading import import_string

    return import_string(board.section)()


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
    from arena.models import AIModel, ModelStatus

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

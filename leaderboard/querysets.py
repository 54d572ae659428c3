"""The reads of a board built from a queryset (:meth:`leaderboard.boards.Board.from_queryset`):
each takes the queryset of the board's counted outcomes, which has a ``winner`` and a
``created_at``, and the fields (or lookups) of its two subjects, and answers in the shape the
board contract asks for."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime

from django.db import connection
from django.db.models import Count, FloatField, Func, IntegerField, Q, QuerySet
from django.db.models.functions import Cast, Extract

WINNERS = ("model_a", "model_b", "tie", "both_bad")

OutcomeRow = tuple[str, str, str, int]
OrderedRow = tuple[str, str, str, datetime | float]
PeriodRow = tuple[int | datetime, str, str, str, int]

Rows = Callable[[], QuerySet]


def fresh(rows: QuerySet | Rows) -> Rows:
    """A function that gives the rows anew at each call: a queryset is copied (it never
    keeps a result between runs), a function is called (it may read a setting each time)."""
    return rows if callable(rows) else rows.all


def grouped_outcomes(queryset, *, model_a: str, model_b: str) -> Iterable[OutcomeRow]:
    """``(subject_a, subject_b, winner, count)`` rows from one ``GROUP BY`` over the pair.

    A ``COUNT(*) FILTER`` per result gives the same numbers as grouping by (pair, result)
    with a quarter of the groups, which halves the query on large tables. Rows with a zero
    count are left out.
    """
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
    mine = queryset.filter(Q(**{model_a: subject}) | Q(**{model_b: subject}))
    return grouped_outcomes(mine, model_a=model_a, model_b=model_b)


def ordered_outcomes(queryset, *, model_a: str, model_b: str,
                     since: datetime | None = None) -> Iterable[OrderedRow]:
    """``(subject_a, subject_b, winner, time)`` per outcome, oldest first (after ``since``).

    On PostgreSQL the time is POSIX seconds (a float) read straight from a client-side
    cursor: for a million rows that is several times faster than ``.iterator()`` with
    Django's per-row converters, and a float needs no datetime built in Python.
    """
    rows = queryset.order_by("created_at", "pk")
    if since is not None:
        rows = rows.filter(created_at__gt=since)
    columns = (model_a, model_b, "winner")
    if connection.vendor != "postgresql":
        return rows.values_list(*columns, "created_at").iterator(chunk_size=50_000)
    rows = rows.annotate(ts=Cast(Extract("created_at", "epoch"), FloatField()))
    return _fetch_plain(rows.values_list(*columns, "ts"))


def _fetch_plain(queryset) -> Iterator[tuple]:
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


def period_outcomes(queryset, *, model_a: str, model_b: str) -> Iterable[PeriodRow]:
    """``(day, subject_a, subject_b, winner, count)``: outcomes grouped by UTC day (a day
    number), the Glicko-2 rating period (seed 004: 24 hours)."""
    return (
        queryset.annotate(period=DayNumber("created_at"))
        .values_list("period", model_a, model_b, "winner")
        .annotate(n=Count("pk"))
        .order_by("period")
    )


def exported_rows(queryset, *, model_a: str, model_b: str,
                  columns: Mapping[str, str]) -> Iterator[dict]:
    """Per outcome, oldest first: ``model_a``, ``model_b``, ``winner``, each of ``columns``
    (name: field) and ``created_at``; ids (UUIDs) as text."""
    names = ("model_a", "model_b", "winner", *columns, "created_at")
    rows = queryset.order_by("created_at", "pk").values_list(
        model_a, model_b, "winner", *columns.values(), "created_at")
    for row in rows.iterator(chunk_size=20_000):
        yield dict(zip(names, (str(v) if isinstance(v, uuid.UUID) else v for v in row),
                       strict=True))


def contest_counts(contests: Rows, counted: Rows, uncounted: Rows | None) -> dict[str, int]:
    """``counts()``: every contest, and either the outcomes left out (``votes_excluded``,
    where they are few and the counted many) or the counted ones (``votes``)."""
    if uncounted is None:
        return {"battles": contests().count(), "votes": counted().count()}
    return {"battles": contests().count(), "votes_excluded": uncounted().count()}

"""Helpers for the reads every mode makes, and for the few statements a hot path writes out
itself (the names it quotes)."""

from __future__ import annotations

from django.db import connection, models
from django.db.models import QuerySet


def one_or_none(queryset: QuerySet):
    """The one row a unique filter (a primary key) names, or ``None``.

    ``first()`` would order the rows first, by the model's default ordering or its key, and
    compiling that ORDER BY costs about as much again as the rest of a lookup (0.35 ms of
    0.74 ms to build a battle's); ``get()`` drops the ordering.
    """
    try:
        return queryset.get()
    except queryset.model.DoesNotExist:
        return None


def table_name(model: type[models.Model]) -> str:
    """The model's table, quoted for this database."""
    return connection.ops.quote_name(model._meta.db_table)


def column_name(model: type[models.Model], field: str) -> str:
    """The column of one of the model's fields, quoted for this database."""
    return connection.ops.quote_name(model._meta.get_field(field).column)

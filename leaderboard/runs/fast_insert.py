"""Insert many rows of a model whose fields hold plain values (numbers, text, booleans, a
foreign key's id), fast: on PostgreSQL one ``COPY``, elsewhere ``bulk_create``.

A rating run writes an entry per model for the board and each category board (3,200 rows
for 200 models and 15 categories); ``bulk_create`` spends most of that half-second preparing
each value in Python, which plain values do not need.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection, models


def insert_plain(model: type[models.Model], objects: Sequence[models.Model]) -> None:
    if connection.vendor != "postgresql":
        model.objects.bulk_create(objects, batch_size=500)
        return
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    if any(isinstance(f, models.JSONField) for f in fields):
        raise TypeError(f"{model.__name__} has a JSON field: use bulk_create")
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    names = [f.attname for f in fields]
    with connection.cursor() as cursor, cursor.cursor.copy(
            f"COPY {table} ({columns}) FROM STDIN") as copy:
        for obj in objects:
            copy.write_row([getattr(obj, name) for name in names])

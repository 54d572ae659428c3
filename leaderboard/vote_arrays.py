"""Counted outcomes as NumPy arrays, for the fits that need every vote (style control).

A board hands over a queryset; on PostgreSQL the rows come as one binary ``COPY`` whose
columns are all 4-byte integers (the subjects are turned into indices by the database),
read with one ``np.frombuffer``: a million votes in a fraction of a second, where building a
Python tuple per row takes seconds. Other databases are read row by row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from leaderboard.ratings.outcomes import parse_outcome

_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
_WINNER_CODES = "CASE q.w WHEN 'model_a' THEN 0 WHEN 'model_b' THEN 1 WHEN 'tie' THEN 2 ELSE 3 END"


class VoteArrays(NamedTuple):
    a: np.ndarray  # index of subject a in the subjects given
    b: np.ndarray
    code: np.ndarray  # outcome codes (leaderboard.ratings.outcomes)
    columns: np.ndarray  # (votes, len(columns)) integers


def vote_arrays(queryset, subjects: Sequence[str], *, model_a: str, model_b: str,
                columns: Sequence[str]) -> VoteArrays:
    """One entry per outcome in ``queryset`` (which has a ``winner`` field) whose two
    subjects are both in ``subjects``, with the integer ``columns`` of each."""
    from django.db import connection

    rows = queryset.order_by().values_list(model_a, model_b, "winner", *columns)
    if connection.vendor == "postgresql":
        return _copied(rows, list(subjects), len(columns))
    index = {s: i for i, s in enumerate(subjects)}
    a, b, code, values = [], [], [], []
    for subject_a, subject_b, winner, *counts in rows.iterator(chunk_size=20_000):
        if subject_a in index and subject_b in index:
            a.append(index[subject_a])
            b.append(index[subject_b])
            code.append(parse_outcome(str(winner)))
            values.append(counts)
    return VoteArrays(np.array(a, dtype=np.int64), np.array(b, dtype=np.int64),
                      np.array(code, dtype=np.int64),
                      np.array(values, dtype=np.int64).reshape(len(a), len(columns)))


def _copied(rows, subjects: list[str], n_columns: int) -> VoteArrays:
    from django.db import connection

    sql, params = rows.query.sql_with_params()
    names = ", ".join(f"c{i}" for i in range(n_columns))
    counts = "".join(f", q.c{i}::int4" for i in range(n_columns))
    copy = (
        f"COPY (SELECT (ma.i - 1)::int4, (mb.i - 1)::int4, ({_WINNER_CODES})::int4{counts} "
        f"FROM ({sql}) AS q(a, b, w{', ' if n_columns else ''}{names}) "
        "JOIN unnest(%s::text[]) WITH ORDINALITY AS ma(slug, i) ON ma.slug = q.a "
        "JOIN unnest(%s::text[]) WITH ORDINALITY AS mb(slug, i) ON mb.slug = q.b"
        ") TO STDOUT (FORMAT binary)"
    )
    with connection.cursor() as cursor, cursor.cursor.copy(
            copy, [*params, subjects, subjects]) as stream:
        data = b"".join(bytes(block) for block in stream)
    fields = 3 + n_columns
    record = np.dtype([("n", ">i2"), *((f"{kind}{i}", ">i4") for i in range(fields)
                                        for kind in ("len", "val"))])
    if not data.startswith(_SIGNATURE):
        raise ValueError("unexpected COPY output from PostgreSQL")
    start = len(_SIGNATURE) + 8 + int.from_bytes(data[15:19], "big")  # flags, extension
    count = (len(data) - start - 2) // record.itemsize
    table = np.frombuffer(data, record, count=count, offset=start)
    if count and (np.any(table["n"] != fields)
                  or any(np.any(table[f"len{i}"] != 4) for i in range(fields))):
        raise ValueError("a NULL or a wider value in the COPY output")
    values = [table[f"val{i}"].astype(np.int64) for i in range(fields)]
    return VoteArrays(values[0], values[1], values[2],
                      np.column_stack(values[3:]) if n_columns
                      else np.zeros((count, 0), dtype=np.int64))

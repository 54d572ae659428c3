"""A board's counted votes as NumPy arrays: one read serves the whole run.

A board whose outcome table carries what a run needs (the pair, the result, each side's
style, the categories as bits, the language) offers ``vote_scan()``. The run then reads the
table once and groups in NumPy: the board, every category board and the style-controlled
fit all come from that one read, instead of a ``GROUP BY`` for the board, another over the
categories and a third read for style control.

On PostgreSQL the read is one value: the database turns each vote into 4-byte integers
(subjects into indices, the result and the language code into numbers), joins them into
one ``bytea`` with ``string_agg``, and NumPy reads it with one ``np.frombuffer``: a million
votes in well under a second, where a Python tuple per row (or a ``COPY``, which sends a
message per row) takes seconds. Other databases are read row by row.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from django.db import connection
from django.db.models import UUIDField

from arena.prompt_categories import UNKNOWN_LANGUAGE
from leaderboard.ratings.outcomes import parse_outcome

_WINNER_CODES = "CASE q.w WHEN 'model_a' THEN 0 WHEN 'model_b' THEN 1 WHEN 'tie' THEN 2 ELSE 3 END"
# A language code of up to three ASCII letters as one number (0: unknown).
_LANGUAGE_NUMBER = ("CASE WHEN q.lang IN ('', 'und') THEN 0 ELSE ascii(substr(q.lang, 1, 1)) "
                    "* 65536 + ascii(substr(q.lang, 2, 1)) * 256 + ascii(substr(q.lang, 3, 1)) "
                    "END")


class VoteScan(NamedTuple):
    subjects: list[str]  # sorted; a and b index into it
    a: np.ndarray
    b: np.ndarray
    code: np.ndarray  # outcome codes (leaderboard.ratings.outcomes)
    style_a: np.ndarray  # (votes, 4): tokens, headers, lists, bold of side a
    style_b: np.ndarray
    categories: np.ndarray  # bits (arena.prompt_categories.CATEGORY_BITS)
    language: np.ndarray  # language codes as numbers (language_number), 0 when unknown


def language_number(code: str) -> int:
    if not code or code == UNKNOWN_LANGUAGE:
        return 0
    padded = (code.encode("ascii", "replace") + b"\0\0\0")[:3]
    return padded[0] * 65536 + padded[1] * 256 + padded[2]


def language_code(number: int) -> str:
    return bytes([number >> 16, (number >> 8) & 255, number & 255]).rstrip(b"\0").decode()


def vote_scan(queryset, subjects: Sequence[str], *, model_a: str, model_b: str,
              style: Sequence[str], categories: str, language: str) -> VoteScan:
    """Every outcome of ``queryset`` (which has a ``winner`` field) between two of
    ``subjects``; ``style`` names side a's tokens, headers, lists and bold columns, then
    side b's."""
    subjects = sorted(subjects)
    rows = queryset.order_by().values_list(model_a, model_b, "winner", *style, categories,
                                           language)
    if connection.vendor == "postgresql" and len(subjects) <= MAX_PACKED_SUBJECTS:
        return _aggregated(_halves(rows), subjects)
    index = {s: i for i, s in enumerate(subjects)}
    kept = []
    for subject_a, subject_b, winner, *values, bits, code in rows.iterator(chunk_size=20_000):
        if subject_a in index and subject_b in index:
            kept.append((index[subject_a], index[subject_b], parse_outcome(str(winner)),
                         *values, bits, language_number(code)))
    table = np.array(kept, dtype=np.int64).reshape(len(kept), 13)
    markdown = [4, 5, 6, 8, 9, 10]  # headers, lists, bold of each side: capped as packed
    table[:, markdown] = np.minimum(table[:, markdown], MARKDOWN_CAP)
    return VoteScan(subjects, table[:, 0], table[:, 1], table[:, 2], table[:, 3:7],
                    table[:, 7:11], table[:, 11], table[:, 12])


# On PostgreSQL a vote travels as six 4-byte integers: a, b and the result in one (a and b
# below 2^14), the two token counts, each side's headers, lists and bold in one (10 bits
# each: a count over 1023 is read as 1023, on every database), and the category bits with
# the language.
MAX_PACKED_SUBJECTS = 1 << 14
PACKED_COLUMNS = 6
MARKDOWN_CAP = 1023
_SMALL = "LEAST(q.{0}, 1023)"


def _halves(rows) -> list:
    """The rows in two halves by a UUID primary key (read side by side, each half on a
    connection of its own: PostgreSQL does not run this aggregate in parallel itself), or
    whole when the key is something else or this connection is in a transaction (whose
    writes another connection would not see)."""
    if connection.in_atomic_block or not isinstance(rows.model._meta.pk, UUIDField):
        return [rows]
    middle = uuid.UUID(int=1 << 127)
    return [rows.filter(pk__lt=middle), rows.filter(pk__gte=middle)]


def _aggregated(parts: list, subjects: list[str]) -> VoteScan:
    if len(parts) == 1:
        blobs = [_packed(parts[0], subjects)]
    else:
        with ThreadPoolExecutor(len(parts)) as pool:
            blobs = list(pool.map(lambda part: _in_own_connection(_packed, part, subjects),
                                  parts))
    table = np.frombuffer(b"".join(blobs), ">i4").reshape(-1, PACKED_COLUMNS)
    pair, tokens_a, tokens_b, markdown_a, markdown_b, tags = table.astype(np.int64).T

    def side(tokens, marks):
        return np.column_stack([tokens, marks >> 20, (marks >> 10) & 1023, marks & 1023])

    return VoteScan(subjects, pair >> 16, (pair >> 2) & 16383, pair & 3,
                    side(tokens_a, markdown_a), side(tokens_b, markdown_b), tags >> 23,
                    tags & ((1 << 23) - 1))


def _in_own_connection(function, *args):
    try:
        return function(*args)
    finally:
        connection.close()


def _packed(rows, subjects: list[str]) -> bytes:
    """The rows as :data:`PACKED_COLUMNS` big-endian 4-byte integers each."""
    sql, params = rows.query.sql_with_params()
    columns = ["ta", "ha", "la", "ba", "tb", "hb", "lb", "bb"]

    def markdown(h: str, lists: str, bold: str) -> str:
        return (f"(({_SMALL.format(h)} << 20) | ({_SMALL.format(lists)} << 10) | "
                f"{_SMALL.format(bold)})")

    packed = [
        f"(((ma.i - 1) << 16) | ((mb.i - 1) << 2) | ({_WINNER_CODES}))",
        "q.ta", "q.tb", markdown("ha", "la", "ba"), markdown("hb", "lb", "bb"),
        f"((q.cats << 23) | ({_LANGUAGE_NUMBER}))",
    ]
    joined = " || ".join(f"int4send(({value})::int4)" for value in packed)
    query = (
        f"SELECT string_agg({joined}, ''::bytea) "
        f"FROM ({sql}) AS q(a, b, w, {', '.join(columns)}, cats, lang) "
        "JOIN unnest(%s::text[]) WITH ORDINALITY AS ma(slug, i) ON ma.slug = q.a "
        "JOIN unnest(%s::text[]) WITH ORDINALITY AS mb(slug, i) ON mb.slug = q.b"
    )
    with connection.cursor() as cursor:
        cursor.execute(query, [*params, subjects, subjects])
        (blob,) = cursor.fetchone()
    return bytes(blob or b"")


"""Read pairwise votes from a CSV file (plain or gzip) into index arrays.

Format: that of LMArena's ``arena-human-preference-140k`` release as shipped in
``shared/data/arena_human_preference_140k.csv.gz`` — a header row naming at least the
columns ``model_a``, ``model_b`` and ``winner`` (any order; other columns are ignored),
then one vote per row.  ``winner`` is ``model_a``, ``model_b``, ``tie`` or ``both_bad``;
``tie (bothbad)`` (FastChat's spelling) and the other spellings of
:data:`leaderboard.ratings.outcomes.OUTCOME_CODES` are accepted too.  Gzip is recognised
by its magic bytes, whatever the file name.

Errors raise :class:`VotesFileError` with a one-line message ``"<file>: row N: <problem>"``.
Rows count CSV records with the header as row 1, which is the line number unless a quoted
field spans lines.  Blank lines are skipped (but still counted).
"""

from __future__ import annotations

import csv
import io
import os
import zlib
from collections.abc import Iterator
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .outcomes import N_OUTCOMES, OUTCOME_CODES, OUTCOME_NAMES, check_codes

REQUIRED_COLUMNS = ("model_a", "model_b", "winner")
_GZIP_MAGIC = b"\x1f\x8b"


class VotesFileError(ValueError):
    """A votes file that cannot be read; the message is one line naming the row."""


class Votes(NamedTuple):
    """Votes as arrays; ``models[a_idx[i]]`` met ``models[b_idx[i]]`` with ``outcome[i]``."""

    models: list[str]
    a_idx: np.ndarray
    b_idx: np.ndarray
    outcome: np.ndarray


def _fail(label: str, row: int, problem: str) -> VotesFileError:
    return VotesFileError(f"{label}: row {row}: {problem}".replace("\n", " "))


def _short(value: str, limit: int = 60) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "…")


def _gunzip(raw: bytes, label: str) -> bytes:
    """Inflate every gzip member; on corrupt or truncated data name the row it broke in."""
    out: list[bytes] = []
    rest = raw
    chunk = 1 << 20
    while rest:
        inflater = zlib.decompressobj(wbits=31)
        try:
            for start in range(0, len(rest), chunk):
                out.append(inflater.decompress(rest[start : start + chunk]))
                if inflater.eof:
                    break
        except zlib.error as exc:
            row = sum(part.count(b"\n") for part in out) + 1
            raise _fail(label, row, f"not a valid gzip file ({exc})") from None
        if not inflater.eof:
            row = sum(part.count(b"\n") for part in out) + 1
            raise _fail(label, row, "truncated gzip file")
        rest = inflater.unused_data
        if rest and rest[:2] != _GZIP_MAGIC:
            break  # trailing garbage after the last member is ignored, as gzip(1) does
    return b"".join(out)


def _decode(raw: bytes, label: str) -> str:
    gzipped = raw[:2] == _GZIP_MAGIC
    data = _gunzip(raw, label) if gzipped else raw
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    # Locate the first bad byte line by line (only on the error path).
    row = 1
    for line in data.split(b"\n"):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            break
        row += 1
    kind = "a CSV" if gzipped else "a CSV or gzip"
    raise _fail(label, row, f"not {kind} file (bytes that are not UTF-8 text)")


_TRUE = frozenset({"true", "1", "yes", "t", "y"})
_FALSE = frozenset({"false", "0", "no", "f", "n", ""})


def read_votes(path: str | os.PathLike[str], *, skip_self_matches: bool = False,
               category: str | None = None) -> Votes:
    """Read a ``.csv`` or ``.csv.gz`` votes file; model names come back sorted.

    A row whose ``model_a`` equals ``model_b`` is an error unless ``skip_self_matches``
    is true, in which case such rows are dropped (the shared 140k release has 10 of them;
    they carry no information for any rating engine). With ``category``, only the rows
    whose column of that name is true (``True``/``1``/``yes``) are kept, as LMArena's
    category boards do; the column must exist.
    """
    path = Path(path)
    label = path.name
    text = _decode(path.read_bytes(), label)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [name.strip() for name in next(reader, [])]
        if not header:
            raise _fail(label, 1, "empty file (expected a header with model_a, model_b, winner)")
        for column in REQUIRED_COLUMNS:
            if column not in header:
                found = _short(", ".join(header), 120)
                raise _fail(label, 1, f"missing column {column!r} (header has: {found})")
        names = list(REQUIRED_COLUMNS)
        if category is not None:
            if category not in header:
                found = _short(", ".join(header), 120)
                raise _fail(label, 1, f"no category column {category!r} (header has: {found})")
            names.append(category)
        cols = [header.index(column) for column in names]
        try:
            # Fast path: every record has the columns (streamed, so no list of records).
            flat = list(chain.from_iterable(map(itemgetter(*cols), reader)))
            row_of, problems = None, []
        except IndexError:  # a blank or short record: redo carefully, with row numbers
            reader = csv.reader(io.StringIO(text, newline=""))
            next(reader)
            flat, row_of, problems = _read_carefully(reader, cols, names)
    except csv.Error as exc:
        raise _fail(label, reader.line_num, f"not a valid CSV file ({exc})") from None
    if category is not None:
        flat, row_of = _in_category(flat, row_of, problems, label=label, category=category)
    return _parse_columns(flat, row_of, problems, label=label, skip_self_matches=skip_self_matches)


def _in_category(flat: list[str], row_of: list[int] | None, problems: list,
                 *, label: str, category: str) -> tuple[list[str], list[int]]:
    """Keep the (model_a, model_b, winner) of the records whose category value is true."""
    if problems:  # a short record: report it as it is
        i, message = min(problems)
        raise _fail(label, row_of[i], message)
    rows = row_of or list(range(2, len(flat) // 4 + 2))
    kept: list[str] = []
    kept_rows: list[int] = []
    for k, value in enumerate(flat[3::4]):
        flag = value.strip().lower()
        if flag in _TRUE:
            kept.extend(flat[4 * k:4 * k + 3])
            kept_rows.append(rows[k])
        elif flag not in _FALSE:
            raise _fail(label, rows[k], f"column {category!r} must be true or false, "
                                        f"not {_short(value)}")
    return kept, kept_rows


def _read_carefully(
    reader: Iterator[list[str]], cols: list[int], names: list[str]
) -> tuple[list[str], list[int], list[tuple[int, str]]]:
    """Skip blank records, stop at the first short one; keep each record's row number."""
    getter = itemgetter(*cols)
    flat: list[str] = []
    row_of: list[int] = []
    for row, record in enumerate(reader, start=2):
        if not record:
            continue
        if len(record) <= max(cols):
            row_of.append(row)
            pairs = zip(names, cols, strict=True)
            missing = next(name for name, k in pairs if k >= len(record))
            problem = f"missing value for column {missing!r} ({len(record)} fields)"
            return flat, row_of, [(len(row_of) - 1, problem)]
        flat.extend(getter(record))
        row_of.append(row)
    return flat, row_of, []


def _find(values: list[str], value: str) -> int:
    try:
        return values.index(value)
    except ValueError:
        return len(values)


def _parse_columns(
    flat: list[str],  # model_a, model_b, winner of each record, one after the other
    row_of: list[int] | None,
    problems: list[tuple[int, str]],  # (record index, message): the earliest is raised
    *,
    label: str,
    skip_self_matches: bool,
) -> Votes:
    names_a, names_b, winners = flat[0::3], flat[1::3], flat[2::3]

    codes = {}
    for value in set(winners):
        code = OUTCOME_CODES.get(value, OUTCOME_CODES.get(value.strip().lower(), -1))
        if code < 0:
            expected = ", ".join(OUTCOME_NAMES)
            problems.append(
                (winners.index(value), f"unknown winner {_short(value)} (expected {expected})")
            )
        codes[value] = code

    index: dict[str, int] = {}
    clean = {name: name.strip() for name in set(names_a) | set(names_b)}
    models = sorted(set(clean.values()) - {""})
    position = {name: i for i, name in enumerate(models)}
    for raw, name in clean.items():
        index[raw] = position.get(name, -1)
        if not name:
            first = min(_find(names_a, raw), _find(names_b, raw))
            column = "model_a" if names_a[first] == raw else "model_b"
            problems.append((first, f"empty model name in column {column!r}"))

    n = len(winners)
    a_idx = np.fromiter(map(index.__getitem__, names_a), dtype=np.int64, count=n)
    b_idx = np.fromiter(map(index.__getitem__, names_b), dtype=np.int64, count=n)
    same = np.flatnonzero((a_idx == b_idx) & (a_idx >= 0))
    if same.size and not skip_self_matches:
        i = int(same[0])
        problems.append((i, f"model_a and model_b are the same model ({_short(names_a[i])})"))
    if problems:
        i, message = min(problems)
        raise _fail(label, i + 2 if row_of is None else row_of[i], message)
    outcome = np.fromiter(map(codes.__getitem__, winners), dtype=np.int64, count=n)
    if same.size:
        keep = a_idx != b_idx
        a_idx, b_idx, outcome = a_idx[keep], b_idx[keep], outcome[keep]
    return Votes(models, a_idx, b_idx, outcome)


def group_outcomes(
    a_idx: np.ndarray, b_idx: np.ndarray, outcome: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Group votes by (a, b, outcome): return the distinct rows ``(a, b, outcome, count)``.

    Order matters: (a, b) and (b, a) stay distinct rows.  Rows come back sorted by
    (a, b, outcome).
    """
    a = np.asarray(a_idx, dtype=np.int64)
    b = np.asarray(b_idx, dtype=np.int64)
    o = check_codes(outcome)
    if not a.shape == b.shape == o.shape:
        raise ValueError("a_idx, b_idx and outcome must have the same length")
    if a.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), empty.copy(), empty.copy()
    if min(a.min(), b.min()) < 0:
        raise ValueError("model indices must be non-negative")
    n = int(max(a.max(), b.max())) + 1
    keys, count = np.unique((a * n + b) * N_OUTCOMES + o, return_counts=True)
    pair = keys // N_OUTCOMES
    return pair // n, pair % n, keys % N_OUTCOMES, count

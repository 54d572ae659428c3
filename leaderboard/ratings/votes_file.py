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
import math
import os
import zlib
from collections.abc import Iterator
from datetime import datetime
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .outcomes import N_OUTCOMES, OUTCOME_CODES, OUTCOME_NAMES, check_codes
from .style_control import STYLE_ELEMENTS

REQUIRED_COLUMNS = ("model_a", "model_b", "winner")
# Per answer, what style control needs (written by ``export_votes``): tokens_a, tokens_b, …
STYLE_COLUMNS = tuple(f"{element}_{side}" for element in STYLE_ELEMENTS for side in "ab")
_GZIP_MAGIC = b"\x1f\x8b"


class VotesFileError(ValueError):
    """A votes file that cannot be read; the message is one line naming the row."""


class Votes(NamedTuple):
    """Votes as arrays; ``models[a_idx[i]]`` met ``models[b_idx[i]]`` with ``outcome[i]``."""

    models: list[str]
    a_idx: np.ndarray
    b_idx: np.ndarray
    outcome: np.ndarray


class Style(NamedTuple):
    """Both answers' style counts per vote, one column per element of
    :data:`STYLE_ELEMENTS`, aligned with the :class:`Votes` they came with."""

    a: np.ndarray
    b: np.ndarray


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
               category: str | None = None, board: str | None = None,
               until: datetime | None = None) -> Votes:
    """Read a ``.csv`` or ``.csv.gz`` votes file; model names come back sorted.

    A row whose ``model_a`` equals ``model_b`` is an error unless ``skip_self_matches``
    is true, in which case such rows are dropped (the shared 140k release has 10 of them;
    they carry no information for any rating engine). With ``category``, only the rows
    whose column of that name is true (``True``/``1``/``yes``) are kept, as LMArena's
    category boards do; the column must exist. With ``board`` (an arena release, which holds
    every board's votes), only the rows whose ``board`` column is that name; with ``until`` (an
    aware datetime), only the rows whose ``timestamp`` (ISO 8601) is before it, the votes a
    rating run that started then read.
    """
    return _read(path, skip_self_matches=skip_self_matches, category=category, board=board,
                 until=until)[0]


def read_styled_votes(path: str | os.PathLike[str], *, skip_self_matches: bool = False,
                      category: str | None = None, board: str | None = None,
                      until: datetime | None = None) -> tuple[Votes, Style]:
    """:func:`read_votes` and the :data:`STYLE_COLUMNS` of the same votes (style control)."""
    return _read(path, skip_self_matches=skip_self_matches, category=category, board=board,
                 until=until, style=True)


def _read(path: str | os.PathLike[str], *, skip_self_matches: bool, category: str | None,
          board: str | None = None, until: datetime | None = None,
          style: bool = False) -> tuple[Votes, Style | None]:
    path = Path(path)
    label = path.name
    text = _decode(path.read_bytes(), label)
    reader = csv.reader(io.StringIO(text, newline=""))
    names = [*REQUIRED_COLUMNS, *([category] if category is not None else []),
             *(["board"] if board is not None else []),
             *(["timestamp"] if until is not None else []),
             *(STYLE_COLUMNS if style else [])]
    try:
        header = [name.strip() for name in next(reader, [])]
        if not header:
            raise _fail(label, 1, "empty file (expected a header with model_a, model_b, winner)")
        for column in names:
            if column not in header:
                found = _short(", ".join(header), 120)
                kind = ("category column" if column == category
                        else "style column" if column in STYLE_COLUMNS else "column")
                what = "missing column" if kind == "column" else f"no {kind}"
                raise _fail(label, 1, f"{what} {column!r} (header has: {found})")
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
    width = len(names)
    columns = {name: flat[j::width] for j, name in enumerate(names)}
    rows = row_of or list(range(2, len(columns["winner"]) + 2))
    problems = [(rows[i], message) for i, message in problems]  # by row number from here
    keep = _category_mask(columns[category], rows, problems, category) if category else None
    if board is not None:
        on_board = np.array([value == board for value in columns["board"]], dtype=bool)
        keep = on_board if keep is None else keep & on_board
    if until is not None:
        before = _before_mask(columns["timestamp"], rows, problems, until)
        keep = before if keep is None else keep & before
    counts = (Style(_style_counts(columns, rows, problems, "a"),
                    _style_counts(columns, rows, problems, "b")) if style else None)
    return _parse_columns(columns["model_a"], columns["model_b"], columns["winner"], rows,
                          problems, label=label, skip_self_matches=skip_self_matches,
                          keep=keep, style=counts)


def _category_mask(values: list[str], rows: list[int], problems: list[tuple[int, str]],
                   category: str) -> np.ndarray:
    """True for the records whose category value is true; a value that is neither true nor
    false is a problem of its row."""
    mask = np.zeros(len(values), dtype=bool)
    for k, value in enumerate(values):
        flag = value.strip().lower()
        if flag in _TRUE:
            mask[k] = True
        elif flag not in _FALSE:
            problems.append((rows[k], f"column {category!r} must be true or false, "
                                      f"not {_short(value)}"))
    return mask


def _before_mask(values: list[str], rows: list[int], problems: list[tuple[int, str]],
                 until: datetime) -> np.ndarray:
    """True for the records whose timestamp is before ``until``; a value that is not an ISO
    8601 time with its offset is a problem of its row."""
    mask = np.zeros(len(values), dtype=bool)
    for k, value in enumerate(values):
        try:
            moment = datetime.fromisoformat(value.strip())
            mask[k] = moment < until
        except (ValueError, TypeError):
            problems.append((rows[k], f"column 'timestamp' must be an ISO 8601 time with its "
                                      f"offset, not {_short(value)}"))
    return mask


def _style_counts(columns: dict[str, list[str]], rows: list[int],
                  problems: list[tuple[int, str]], side: str) -> np.ndarray:
    """One side's style counts (records × elements); a count must be a number ≥ 0."""
    out = np.zeros((len(columns["winner"]), len(STYLE_ELEMENTS)))
    for j, element in enumerate(STYLE_ELEMENTS):
        name = f"{element}_{side}"
        for k, value in enumerate(columns[name]):
            try:
                out[k, j] = number = float(value or 0)
            except ValueError:
                number = -1.0
            if not number >= 0 or math.isinf(number):
                problems.append((rows[k], f"column {name!r} must be a count, "
                                          f"not {_short(value)}"))
    return out


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
    names_a: list[str],
    names_b: list[str],
    winners: list[str],
    rows: list[int],  # the row number of each record
    problems: list[tuple[int, str]],  # (row, message): the earliest is raised
    *,
    label: str,
    skip_self_matches: bool,
    keep: np.ndarray | None = None,  # records to keep (a category), all when None
    style: Style | None = None,
) -> tuple[Votes, Style | None]:
    codes = {}
    for value in set(winners):
        code = OUTCOME_CODES.get(value, OUTCOME_CODES.get(value.strip().lower(), -1))
        if code < 0:
            expected = ", ".join(OUTCOME_NAMES)
            problems.append(
                (rows[winners.index(value)],
                 f"unknown winner {_short(value)} (expected {expected})")
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
            problems.append((rows[first], f"empty model name in column {column!r}"))

    n = len(winners)
    a_idx = np.fromiter(map(index.__getitem__, names_a), dtype=np.int64, count=n)
    b_idx = np.fromiter(map(index.__getitem__, names_b), dtype=np.int64, count=n)
    same = np.flatnonzero((a_idx == b_idx) & (a_idx >= 0))
    if same.size and not skip_self_matches:
        i = int(same[0])
        problems.append((rows[i],
                         f"model_a and model_b are the same model ({_short(names_a[i])})"))
    if problems:
        row, message = min(problems)
        raise _fail(label, row, message)
    outcome = np.fromiter(map(codes.__getitem__, winners), dtype=np.int64, count=n)
    if keep is not None or same.size:
        kept = (a_idx != b_idx) & (keep if keep is not None else True)
        a_idx, b_idx, outcome = a_idx[kept], b_idx[kept], outcome[kept]
        if style is not None:
            style = Style(style[0][kept], style[1][kept])
    if keep is not None:  # a category board has the models of its own votes only
        used = np.unique(np.concatenate([a_idx, b_idx]))
        models = [models[i] for i in used]
        a_idx, b_idx = np.searchsorted(used, a_idx), np.searchsorted(used, b_idx)
    return Votes(models, a_idx, b_idx, outcome), style


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

"""The registry of what a release publishes: each mode declares its sources in its own
``<app>/open_data.py`` and calls :func:`register_source`; :class:`releases.apps.ReleasesConfig`
imports every installed app's ``open_data`` module at start-up, so this app imports no mode.

A source is one leaderboard board's outcomes as published rows. ``rows(until)`` yields, oldest
first, one dict per counted outcome created before ``until`` with the keys of
:data:`releases.schema.COLUMNS` it knows (the others are left empty): the pair and the winner
exactly as the board rates them, so that ``manage.py rate --board NAME`` on a release
reproduces the board. A row's ``id`` and ``contest_id`` are the vote's and the contest's own
primary keys: the release publishes them only as opaque keys (:mod:`releases.identifiers`).
A row's ``conversation_a`` and ``conversation_b`` are lists of
``{"role", "content"}`` messages, given only when the voter ticked "my prompts and answers may
be published" (``publish_text``); the release redacts them. ``removed(until)`` counts the
outcomes left out, by reason, for the datasheet. ``reproduces`` names the leaderboard boards
that ``manage.py rate --board NAME`` rebuilds exactly from these rows (a Bradley–Terry board
rated on the very outcomes published); the leaderboard links a release, with its ``rate``
options, only beside those. A board rated otherwise (Glicko-2 on per-debate majorities), or on
a subset that the rows do not mark (an architecture's voice battles), is not reproduced.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from arena.prompt_categories import classify_by_rules

VOTERS = ("human", "ai")
BATCH = 2_000  # votes read at once: what a batch needs besides them is one query per batch


@dataclass(frozen=True)
class Source:
    board: str  # the leaderboard board the rows rate on
    mode: str  # "battle", "debate", "voice", "panel": where the contest happened
    rows: Callable[[datetime], Iterable[Mapping[str, Any]]]
    removed: Callable[[datetime], Mapping[str, int]]
    voter: str = "human"  # who judged: a person, or AI models (panels)
    note: str = ""  # one line for the datasheet: how the board rates these rows
    reproduces: tuple[str, ...] = ()  # boards `rate --board <board>` rebuilds from the rows

    def __post_init__(self) -> None:
        if self.voter not in VOTERS:
            raise ValueError(f"source {self.board}: voter must be one of {VOTERS}")


_registry: dict[str, Source] = {}


@functools.lru_cache(maxsize=4096)
def prompt_columns(prompt: str) -> dict[str, Any]:
    """A row's ``language`` and ``categories`` for a contest that stored no classification
    of its prompt (a debate's motion, a panel's question), by the same deterministic rules
    that classify a text battle's prompt before any model judges it."""
    found = classify_by_rules(prompt)
    return {"language": found.language, "categories": set(found.categories)}


def register_source(source: Source) -> Source:
    _registry[source.board] = source
    return source


def unregister_source(board: str) -> None:
    _registry.pop(board, None)


def sources() -> list[Source]:
    """Every registered source, by board name."""
    return [_registry[name] for name in sorted(_registry)]


def released_board(board: str) -> bool:
    """Whether a release holds ``board``'s votes: a source's board, or one of its subsets
    (``agent-<architecture>`` of ``agent``)."""
    return any(board == s.board or board.startswith(f"{s.board}-") for s in _registry.values())


def reproducible_boards() -> set[str]:
    """The leaderboard boards that a release reproduces with ``manage.py rate``."""
    return {name for source in _registry.values() for name in source.reproduces}


def removed_by_reason(reasons: Iterable[str]) -> dict[str, int]:
    """Counts of left-out votes by reason, each reason cut to its general part (a reason's
    particulars, such as the word that named a model, are not published)."""
    counted: dict[str, int] = {}
    for reason in reasons:
        general = (reason or "not counted").split(" (")[0].split(":")[0].strip()[:80]
        counted[general] = counted.get(general, 0) + 1
    return counted


def rows_in_batches(votes, rows_of: Callable[[list], Iterable[dict]]) -> Iterator[dict]:
    """The rows of ``votes`` (a queryset, oldest first) read :data:`BATCH` at a time:
    ``rows_of(batch)`` reads what the batch's rows need besides the votes (their battles'
    answers, a debate's speeches) in one query, so a release costs a query per batch, not
    per vote."""
    batch = []
    for vote in votes.iterator(chunk_size=BATCH):
        batch.append(vote)
        if len(batch) == BATCH:
            yield from rows_of(batch)
            batch = []
    yield from rows_of(batch)

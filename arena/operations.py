"""What a mode tells the operations page (``/ops/``) about its work and its votes.

A mode names an :class:`Operations` in its :class:`arena.modes.Mode` (``operations``, a dotted
path, like ``counted_votes``): the kinds of work it runs (:class:`Work`: a model whose rows
are units of work with a status, a start time and a duration) and the rows that are its votes
(:class:`Votes`). The page counts them in its own windows; the mode declares where to look,
never how to count, so every mode's figures mean the same thing and the platform imports no
mode. Field names may follow relations (``"turn__created_at"``) where a row keeps its start
time on its parent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import models
from django.db.models import Q

from arena.steps.base import StepStatus


@dataclass(frozen=True)
class Work:
    """One kind of a mode's work, e.g. the battle answers (platform steps) or whole debates.

    ``done``/``failed``: the statuses that end it well or badly (any other is under way, or
    ended otherwise, e.g. a cancelled debate); ``at``: when it started; ``duration``: how long
    it took (None: not recorded), times ``to_ms`` to make milliseconds."""

    label: str
    model: type[models.Model]
    at: str = "created_at"
    duration: str | None = "latency_ms"
    to_ms: float = 1.0
    status: str = "status"
    done: tuple[str, ...] = (StepStatus.DONE,)
    failed: tuple[str, ...] = (StepStatus.FAILED,)
    where: Q = field(default_factory=Q)


@dataclass(frozen=True)
class Votes:
    """A mode's votes: rows of ``model`` (with ``created_at``) matching ``where`` (e.g. not
    the reveals a vote table also keeps)."""

    model: type[models.Model]
    where: Q = field(default_factory=Q)


@dataclass(frozen=True)
class Operations:
    work: tuple[Work, ...] = ()
    votes: Votes | None = None

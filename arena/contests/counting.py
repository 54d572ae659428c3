"""Which of a mode's votes count for ratings: the daily cap per visitor (a person, whichever
way they are signed in, or an anonymous session), and the sweep that stops counting the votes
of visitors :mod:`arena.contests.flags` flags.

A mode describes its vote model once with :class:`CountedVotes` (named by its
:class:`arena.modes.Mode`'s ``counted_votes``); the vote
model has ``counts_for_rating``, ``exclusion_reason``, ``voter`` (the client address as
:func:`arena.contests.flags.visitor_of_address` keys it) and ``created_at``. The mode asks
:meth:`CountedVotes.eligibility` when it records a vote; the platform's beat task sweeps every
registered mode (:func:`sweep_all`), and a flag staff clear makes its votes count again.

A visitor is a session and, separately, a client address: a bot that takes a new session for
every vote is still one address. Votes are kept whatever happens; only their counting changes.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, models
from django.utils import timezone

from arena import modes
from arena.contests.bans import VOTER_BANNED, bans_apply, voter_banned
from arena.contests.flags import (
    FLAGGED_PREFIX,
    OVER_DAILY_CAP,
    flagged_visitors,
    visitors_flag,
)
from arena.contests.integrity import CastVote
from arena.queries import column_name, table_name

logger = logging.getLogger(__name__)

_over_cap_statements: dict[tuple, str] = {}


@dataclass(frozen=True)
class CountedVotes:
    """A mode's votes as the integrity rules see them.

    ``session``: the vote model's field holding the voter's session key; ``facts``: the fields
    ``cast`` reads, given with ``created_at`` last, returning the vote as the tests see it
    (None: not a vote, e.g. a reveal); ``recounted``: called with the votes whose counting
    changed (a mode that keeps a tally re-counts it)."""

    mode: str
    model: type[models.Model]
    session: str
    facts: tuple[str, ...]
    cast: Callable[..., CastVote | None]
    recounted: Callable[[models.QuerySet], None] | None = None

    def eligibility(self, *, session_key: str, voter: str) -> dict:
        """``{}`` when a new vote counts; otherwise its fields: past the visitor's daily cap
        (by session, or by address at ``ARENA_RATE_LIMIT_IP_MULTIPLIER`` times the cap; 0: no
        cap), or cast by a banned voter (:mod:`arena.contests.bans`). A signed-in person's
        votes hold their account's key in place of a session's
        (:func:`arena.sessions.session_key_for`), so their cap is one over every browser and
        API token they vote from, and what they voted anonymously that day joins it at
        sign-in (:mod:`arena.visitor_merge`).

        Each side is one indexed lookup that stops at the cap (does the cap-th counted vote
        of the day exist?): its cost does not grow with the day's votes, nor with a busy
        address's. Both run as one statement, built once (:meth:`_over_cap_statement`): a
        vote asks this every time."""
        cap = settings.ARENA_COUNTED_VOTES_PER_DAY
        if cap > 0 and self._over_cap(cap, session_key=session_key, voter=voter):
            return {"counts_for_rating": False,
                    "exclusion_reason": OVER_DAILY_CAP.format(cap=cap)}
        if voter_banned(session_key=session_key, voter=voter):
            return {"counts_for_rating": False, "exclusion_reason": VOTER_BANNED}
        return {}

    def _over_cap(self, cap: int, *, session_key: str, voter: str) -> bool:
        sides = [(field, limit, value) for field, limit, value in (
            (self.session, cap, session_key),
            ("voter", cap * settings.ARENA_RATE_LIMIT_IP_MULTIPLIER, voter)) if value]
        if not sides:
            return False
        statement = self._over_cap_statement(tuple((field, limit) for field, limit, _ in sides))
        since = self.model._meta.get_field("created_at").get_db_prep_value(
            timezone.now() - timedelta(days=1), connection)
        with connection.cursor() as cursor:
            cursor.execute(statement, [param for _, _, value in sides for param in (value, since)])
            return any(cursor.fetchone())

    def _over_cap_statement(self, sides: tuple[tuple[str, int], ...]) -> str:
        """``SELECT EXISTS (…), …``, one per ``(field, limit)``: does the limit-th counted vote
        with a value in the field, since a time, exist? (Parameters: each side's value and
        time.) Built once per process and database kind."""
        key = (self.mode, sides, connection.vendor)
        if key not in _over_cap_statements:
            table = table_name(self.model)
            counted, created = (column_name(self.model, name)
                                for name in ("counts_for_rating", "created_at"))
            _over_cap_statements[key] = "SELECT " + ", ".join(
                f"EXISTS (SELECT 1 FROM {table} WHERE {column_name(self.model, field)} = %s "
                f"AND {counted} AND {created} >= %s LIMIT 1 OFFSET {limit - 1})"
                for field, limit in sides)
        return _over_cap_statements[key]

    def sweep(self) -> dict[str, int]:
        """Flag the visitors whose recent votes are far beyond chance, then stop counting
        every flagged visitor's votes (kept, marked with the reason)."""
        since = timezone.now() - timedelta(days=settings.ARENA_INTEGRITY_DAYS)
        rows = (self.model.objects.filter(created_at__gte=since).order_by()
                .values_list(self.session, "voter", *self.facts, "created_at"))
        by_visitor: dict[str, list[CastVote]] = defaultdict(list)
        for session_key, voter, *facts in rows.iterator():
            cast = self.cast(*facts)
            if cast is None:
                continue
            if session_key:
                by_visitor[f"session:{session_key}"].append(cast)
            if voter:
                by_visitor[voter].append(cast)
        new = visitors_flag(self.mode, by_visitor)
        marked = 0
        for visitor, reason in flagged_visitors(self.mode).items():
            votes = self.of_visitor(visitor).filter(counts_for_rating=True)
            marked += self._recount(votes, counts_for_rating=False,
                                    exclusion_reason=(FLAGGED_PREFIX + reason)[:200])
        if new or marked:
            logger.warning("vote integrity (%s): %d visitor(s) flagged, %d vote(s) stopped "
                           "counting", self.mode, len(new), marked)
        return {"flagged": len(new), "votes_marked": marked}

    def count_again(self, visitor: str) -> int:
        """Staff cleared the visitor's flag: the votes it stopped counting count again."""
        votes = self.of_visitor(visitor).filter(exclusion_reason__startswith=FLAGGED_PREFIX)
        return self._recount(votes, counts_for_rating=True, exclusion_reason="")

    def of_visitor(self, visitor: str) -> models.QuerySet:
        kind, _, key = visitor.partition(":")
        lookup = {self.session: key} if kind == "session" else {"voter": visitor}
        return self.model.objects.filter(**lookup)

    def _recount(self, votes: models.QuerySet, **fields) -> int:
        changed = list(votes.values_list("pk", flat=True))
        if not changed:
            return 0
        self.model.objects.filter(pk__in=changed).update(**fields)
        if self.recounted is not None:
            self.recounted(self.model.objects.filter(pk__in=changed))
        return len(changed)


def sweep_all() -> dict[str, dict[str, int]]:
    """Every mode's sweep (the platform's beat task), and the bans' marks."""
    swept = {counted.mode: counted.sweep() for counted in modes.counted_votes()}
    bans_apply()
    return swept


"""Bans: staff stop a voter's votes counting, in every mode at once (one platform rule).

A ban names a visitor as the integrity flags do (``session:<key>``, the key an anonymous
session or a person's account keeps its rows under, or ``ip:<keyed hash>``) and is kept as
a :class:`arena.models.VoterBan`. The votes are kept, marked ``counts_for_rating=False`` with
:data:`VOTER_BANNED`, in every mode that declares its votes
(:class:`arena.contests.counting.CountedVotes`):

* when staff ban (:func:`voter_ban`), so the board changes at the next rating run;
* at every rating run and integrity sweep (:func:`bans_apply`), for votes that reached a
  banned key since (a race with the ban, or rows a sign-in moved to a banned account);
* when a banned voter votes (:meth:`CountedVotes.eligibility`): recorded, not counted.

Lifting a ban (:func:`voter_unban`) counts again the votes the ban stopped, except those of
a voter another standing ban covers (the session's address is banned too) or that a
standing integrity flag covers (they take the flag's reason, so clearing the flag counts
them again).
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from arena import modes
from arena.models import FlagStatus, VisitorFlag, VoterBan

logger = logging.getLogger(__name__)

VOTER_BANNED = "voter banned"
BAD_VISITOR = "Name a voter as session:<key> or ip:<hash>."


def visitor_of_key(key: str) -> str:
    """A session's (or an account's) key as a ban or a flag names it."""
    return f"session:{key}"


def check_visitor(visitor: str) -> None:
    """Raise ValueError unless ``visitor`` names a session or an address."""
    kind, _, rest = visitor.partition(":")
    if kind not in ("session", "ip") or not rest or len(visitor) > 80:
        raise ValueError(BAD_VISITOR)


def banned_visitors() -> set[str]:
    return set(VoterBan.objects.filter(lifted_at__isnull=True).values_list("visitor",
                                                                           flat=True))


def voter_banned(*, session_key: str | None, voter: str | None) -> bool:
    """Whether a standing ban covers a new vote of this session (or account) or address."""
    named = [v for v in (visitor_of_key(session_key) if session_key else "", voter or "") if v]
    return bool(named) and VoterBan.objects.filter(visitor__in=named,
                                                   lifted_at__isnull=True).exists()


def _mark(counted, visitor: str) -> int:
    votes = counted.of_visitor(visitor).filter(counts_for_rating=True)
    return counted._recount(votes, counts_for_rating=False, exclusion_reason=VOTER_BANNED)


def bans_apply(visitors: list[str] | None = None) -> int:
    """Mark the counted votes of every banned voter (or of ``visitors``) as not counting, in
    every mode; how many. A rating run calls it before it reads the votes."""
    banned = banned_visitors() if visitors is None else visitors
    marked = sum(_mark(counted, visitor) for counted in modes.counted_votes()
                 for visitor in banned)
    if marked:
        logger.warning("bans: %d vote(s) of banned voters stopped counting", marked)
    return marked


def voter_ban(*, visitor: str, reason: str = "", by: str = "") -> VoterBan:
    """Ban ``visitor`` (again, if a ban was lifted) and stop counting its votes now."""
    check_visitor(visitor)
    with transaction.atomic():
        ban, _ = VoterBan.objects.select_for_update().update_or_create(
            visitor=visitor, defaults={"reason": reason[:200], "banned_by": by,
                                       "banned_at": timezone.now(), "lifted_at": None,
                                       "lifted_by": ""})
        bans_apply([visitor])
    return ban


def _still_out(counted, votes: QuerySet, standing: set[str]) -> QuerySet:
    """Those of ``votes`` whose session or address ``standing`` names."""
    sessions = [v.partition(":")[2] for v in standing if v.startswith("session:")]
    addresses = [v for v in standing if v.startswith("ip:")]
    return votes.filter(Q(**{f"{counted.session}__in": sessions}) | Q(voter__in=addresses))


def voter_unban(*, visitor: str, by: str = "") -> int:
    """Lift the ban on ``visitor``: its votes the ban stopped count again (see the module);
    how many."""
    from arena.contests.flags import FLAGGED_PREFIX  # noqa: PLC0415 - SciPy: only here

    check_visitor(visitor)
    counted_again = 0
    with transaction.atomic():
        updated = VoterBan.objects.filter(visitor=visitor, lifted_at__isnull=True).update(
            lifted_at=timezone.now(), lifted_by=by)
        if not updated:
            return 0
        other_bans = banned_visitors()
        for counted in modes.counted_votes():
            stopped = counted.of_visitor(visitor).filter(exclusion_reason=VOTER_BANNED)
            flags = dict(VisitorFlag.objects.filter(
                mode=counted.mode, status__in=[FlagStatus.FLAGGED, FlagStatus.CONFIRMED])
                .values_list("visitor", "reason"))
            for flagged, reason in flags.items():
                counted._recount(_still_out(counted, stopped, {flagged}),
                                 exclusion_reason=(FLAGGED_PREFIX + reason)[:200])
            stopped = stopped.exclude(pk__in=_still_out(counted, stopped, other_bans)
                                      .values("pk"))
            counted_again += counted._recount(stopped, counts_for_rating=True,
                                              exclusion_reason="")
    logger.info("bans: %s lifted by %s, %d vote(s) count again", visitor, by, counted_again)
    return counted_again

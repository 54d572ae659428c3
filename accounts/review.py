"""What staff review: each voter's votes per mode, and the voters that look suspicious across
modes (the integrity flags of :mod:`arena.contests.flags`, and the accounts staff flagged),
with whether a ban stands."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from accounts.models import Profile
from arena import modes
from arena.contests.bans import banned_visitors, visitor_of_key
from arena.models import FlagStatus, VisitorFlag

STANDING = (FlagStatus.FLAGGED, FlagStatus.CONFIRMED)


def _count(counted, *, only_counted: bool) -> Coalesce:
    votes = counted.model.objects.filter(**{counted.session: OuterRef("visitor_key")})
    if only_counted:
        votes = votes.filter(counts_for_rating=True)
    number = votes.order_by().values(counted.session).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(number, output_field=IntegerField()), Value(0))


def profiles_with_votes(queryset: QuerySet) -> QuerySet:
    """Profiles with ``votes_<mode>`` and ``counted_<mode>`` for every mode with votes: one
    query, a correlated count per mode."""
    annotations = {}
    for counted in modes.counted_votes():
        annotations[f"votes_{counted.mode}"] = _count(counted, only_counted=False)
        annotations[f"counted_{counted.mode}"] = _count(counted, only_counted=True)
    return queryset.annotate(**annotations)


def vote_modes() -> list[str]:
    return [counted.mode for counted in modes.counted_votes()]


@dataclass
class SuspiciousVoter:
    visitor: str
    flags: list[VisitorFlag] = field(default_factory=list)
    account: Profile | None = None
    votes: dict[str, tuple[int, int]] = field(default_factory=dict)  # mode: (all, counted)
    banned: bool = False

    @property
    def cells(self) -> list[tuple[int, int]]:
        """``(all, counted)`` per mode, in :func:`vote_modes` order."""
        return [self.votes.get(mode, (0, 0)) for mode in vote_modes()]

    @property
    def kind(self) -> str:
        if self.account is not None:
            return "account"
        return "address" if self.visitor.startswith("ip:") else "anonymous session"


def _votes_per_mode(visitors: list[str]) -> dict[str, dict[str, tuple[int, int]]]:
    sessions = [v.partition(":")[2] for v in visitors if v.startswith("session:")]
    addresses = [v for v in visitors if v.startswith("ip:")]
    found: dict[str, dict[str, tuple[int, int]]] = {v: {} for v in visitors}
    for counted in modes.counted_votes():
        for column, values, prefix in ((counted.session, sessions, "session:"),
                                       ("voter", addresses, "")):
            if not values:
                continue
            rows = (counted.model.objects.filter(**{f"{column}__in": values}).order_by()
                    .values(column).annotate(all=Count("pk"),
                                             counted=Count("pk", filter=Q(counts_for_rating=True)))
                    .values_list(column, "all", "counted"))
            for value, total, counting in rows:
                found[f"{prefix}{value}"][counted.mode] = (total, counting)
    return found


def suspicious_voters(limit: int = 200) -> list[SuspiciousVoter]:
    """Voters a standing integrity flag marks in any mode, and accounts staff flagged,
    most recently flagged first."""
    voters: dict[str, SuspiciousVoter] = {}
    for flag in VisitorFlag.objects.filter(status__in=STANDING).order_by("-created_at")[:limit]:
        voters.setdefault(flag.visitor, SuspiciousVoter(flag.visitor)).flags.append(flag)
    for profile in Profile.objects.filter(flagged=True).select_related("user")[:limit]:
        voters.setdefault(visitor_of_key(profile.visitor_key),
                          SuspiciousVoter(visitor_of_key(profile.visitor_key)))
    keys = [v.partition(":")[2] for v in voters if v.startswith("session:")]
    for profile in Profile.objects.filter(visitor_key__in=keys).select_related("user"):
        voters[visitor_of_key(profile.visitor_key)].account = profile
    banned = banned_visitors()
    votes = _votes_per_mode(list(voters))
    for visitor, voter in voters.items():
        voter.banned = visitor in banned
        voter.votes = votes[visitor]
    return list(voters.values())

"""What staff decide about a person or an anonymous session: a flag (under review, the votes
still count) or a ban (the votes, kept, stop counting at the next rating run, in every mode:
the platform's rule, :mod:`arena.contests.bans`).

A person's rows are kept under their account's key (``Profile.visitor_key``), so banning the
account is banning that key; ``Profile.banned`` says so on the account and is set only here,
in the same transaction as the platform's ban."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from accounts.models import Profile
from arena.contests.bans import visitor_of_key, voter_ban, voter_banned, voter_unban

FLAG_REASON_DEFAULT = "flagged by staff for review"


def account_flag(*, profile: Profile, reason: str = "") -> None:
    profile.flagged, profile.flag_reason = True, (reason or FLAG_REASON_DEFAULT)[:200]
    profile.save(update_fields=["flagged", "flag_reason"])


def account_unflag(*, profile: Profile) -> None:
    profile.flagged, profile.flag_reason = False, ""
    profile.save(update_fields=["flagged", "flag_reason"])


def account_ban(*, profile: Profile, by: str, reason: str = "") -> None:
    """Ban the person: their votes in every mode stop counting (kept, marked)."""
    with transaction.atomic():
        voter_ban(visitor=visitor_of_key(profile.visitor_key), reason=reason, by=by)
        profile.banned, profile.banned_at = True, timezone.now()
        profile.save(update_fields=["banned", "banned_at"])


def account_unban(*, profile: Profile, by: str) -> int:
    """Lift the person's ban: the votes it stopped count again; how many."""
    with transaction.atomic():
        counted = voter_unban(visitor=visitor_of_key(profile.visitor_key), by=by)
        profile.banned, profile.banned_at = False, None
        profile.save(update_fields=["banned", "banned_at"])
    return counted


def _account_of(visitor: str) -> Profile | None:
    if not visitor.startswith("session:"):
        return None
    return Profile.objects.filter(visitor_key=visitor.removeprefix("session:")).first()


def ban(*, visitor: str, by: str, reason: str = "") -> None:
    """Ban a voter as the flags name one; an account's key bans the account."""
    profile = _account_of(visitor)
    if profile is not None:
        account_ban(profile=profile, by=by, reason=reason)
    else:
        voter_ban(visitor=visitor, reason=reason, by=by)


def unban(*, visitor: str, by: str) -> int:
    profile = _account_of(visitor)
    if profile is not None:
        return account_unban(profile=profile, by=by)
    return voter_unban(visitor=visitor, by=by)


def account_ban_sync(*, user) -> None:
    """``Profile.banned`` as the platform's standing bans say (a sign-in moves an anonymous
    session's ban to the account, arena.visitor_merge)."""
    profile = Profile.objects.filter(user=user).first()
    if profile is None:
        return
    stands = voter_banned(session_key=profile.visitor_key, voter=None)
    if stands != profile.banned:
        profile.banned, profile.banned_at = stands, timezone.now() if stands else None
        profile.save(update_fields=["banned", "banned_at"])

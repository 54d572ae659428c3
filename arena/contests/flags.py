"""Flags on visitors whose votes stop counting, and how a mode names a visitor's address.

A mode gives :func:`visitors_flag` its votes grouped by visitor; each visitor the tests of
:mod:`arena.contests.integrity` find is flagged once (kept with the reason for staff to
review in the admin). The mode then stops counting the flagged visitors' votes
(:func:`flagged_visitors`) and counts them again when staff clear a flag
(:func:`flag_review`, through the mode's :class:`arena.contests.counting.CountedVotes`)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils import timezone

from arena import modes
from arena.contests.integrity import CastVote, Thresholds, findings, model_win_rates
from arena.models import FlagStatus, VisitorFlag
from arena.ratelimit import client_ip

OVER_DAILY_CAP = "over the daily cap of {cap} counted votes"
FLAGGED_PREFIX = "visitor flagged: "


def visitor_of_address(ip: str) -> str:
    """``ip:<hash>``: an address, keyed with SECRET_KEY, so it is never stored as it is."""
    if not ip:
        return ""
    digest = hmac.new(settings.SECRET_KEY.encode(), ip.encode(), hashlib.sha256)
    return f"ip:{digest.hexdigest()[:24]}"


def voter_of(request: HttpRequest) -> str:
    """The request's client address as a vote's ``voter`` (keyed, see above)."""
    return visitor_of_address(client_ip(request))


def thresholds() -> Thresholds:
    return Thresholds(alpha=settings.ARENA_INTEGRITY_ALPHA,
                      min_votes=settings.ARENA_INTEGRITY_MIN_VOTES,
                      burst_votes=settings.ARENA_INTEGRITY_BURST_VOTES,
                      burst_window=timedelta(seconds=settings.ARENA_INTEGRITY_BURST_SECONDS))


def visitors_flag(mode: str, votes: Mapping[str, Sequence[CastVote]]) -> list[VisitorFlag]:
    """Flag the visitors (keys of ``votes``) the tests find; a visitor flagged before, or
    cleared by staff, is left as it is. Returns the new flags."""
    rates = model_win_rates(v for visitor_votes in votes.values() for v in visitor_votes)
    known = set(VisitorFlag.objects.filter(mode=mode).values_list("visitor", flat=True))
    limits, created = thresholds(), []
    for visitor, cast in votes.items():
        if not visitor or visitor in known:
            continue
        found = findings(cast, rates, limits)
        if not found:
            continue
        try:
            with transaction.atomic():
                created.append(VisitorFlag.objects.create(
                    mode=mode, visitor=visitor, reason="; ".join(f.reason for f in found),
                    p_value=min((f.p_value for f in found if f.p_value is not None),
                                default=None),
                    votes=max(f.votes for f in found)))
        except IntegrityError:  # flagged meanwhile by another sweep
            continue
    return created


def flagged_visitors(mode: str) -> dict[str, str]:
    """The visitors whose votes do not count in ``mode``, with the reason."""
    standing = VisitorFlag.objects.filter(
        mode=mode, status__in=[FlagStatus.FLAGGED, FlagStatus.CONFIRMED])
    return dict(standing.values_list("visitor", "reason"))


def flag_review(flag: VisitorFlag, *, status: str, by: str) -> None:
    """Staff confirm a flag or clear it (then its mode counts the votes again)."""
    flag.status, flag.reviewed_at, flag.reviewed_by = status, timezone.now(), by
    flag.save(update_fields=["status", "reviewed_at", "reviewed_by"])
    if status == FlagStatus.CLEARED:
        for counted in modes.counted_votes():
            if counted.mode == flag.mode:
                counted.count_again(flag.visitor)

"""Vote integrity for text battles: the daily cap on counted votes, and the sweep that stops
counting the votes of visitors the platform's tests flag (:mod:`arena.contests.flags`).

A visitor is a session and, separately, a client address (keyed hash): a bot that takes a
new session for every battle is still one address."""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.dispatch import receiver
from django.utils import timezone

from arena.contests.flags import (
    FLAGGED_PREFIX,
    OVER_DAILY_CAP,
    flagged_visitors,
    visitor_flag_cleared,
    visitors_flag,
)
from arena.contests.integrity import CastVote
from arena.contests.voting import VoteChoice, Winner
from battles.models import Battle, Vote

logger = logging.getLogger(__name__)
MODE = "battles"
SIDES = {VoteChoice.LEFT_BETTER: "left", VoteChoice.RIGHT_BETTER: "right"}


def over_daily_cap(battle: Battle, voter: str) -> dict:
    """The vote's eligibility under the cap: a visitor's counted votes today (by session,
    or by address at ``ARENA_RATE_LIMIT_IP_MULTIPLIER`` times the cap)."""
    cap = settings.ARENA_COUNTED_VOTES_PER_DAY
    day_ago = timezone.now() - timedelta(days=1)
    counted = Vote.objects.filter(counts_for_rating=True, created_at__gte=day_ago)
    by_session = counted.filter(battle__session_key=battle.session_key).count()
    by_address = counted.filter(voter=voter).count() if voter else 0
    if by_session >= cap or by_address >= cap * settings.ARENA_RATE_LIMIT_IP_MULTIPLIER:
        return {"counts_for_rating": False, "exclusion_reason": OVER_DAILY_CAP.format(cap=cap)}
    return {}


def votes_sweep() -> dict[str, int]:
    """Flag the visitors whose recent votes are far beyond chance, then stop counting every
    flagged visitor's votes (kept, marked with the reason). Returns what it did."""
    since = timezone.now() - timedelta(days=settings.ARENA_INTEGRITY_DAYS)
    rows = (Vote.objects.filter(created_at__gte=since).order_by()
            .values_list("battle__session_key", "voter", "choice", "winner", "model_a_id",
                         "model_b_id", "created_at"))
    by_visitor: dict[str, list[CastVote]] = defaultdict(list)
    for session_key, voter, choice, winner, model_a, model_b, at in rows.iterator():
        pair = ((model_a, model_b) if winner == Winner.MODEL_A
                else (model_b, model_a) if winner == Winner.MODEL_B else (None, None))
        cast = CastVote(SIDES.get(choice), *pair, at)
        by_visitor[f"session:{session_key}"].append(cast)
        if voter:
            by_visitor[voter].append(cast)
    new = visitors_flag(MODE, by_visitor)
    marked = 0
    for visitor, reason in flagged_visitors(MODE).items():
        kind, _, key = visitor.partition(":")
        votes = (Vote.objects.filter(battle__session_key=key) if kind == "session"
                 else Vote.objects.filter(voter=visitor))
        marked += votes.filter(counts_for_rating=True).update(
            counts_for_rating=False, exclusion_reason=(FLAGGED_PREFIX + reason)[:200])
    if new or marked:
        logger.warning("vote integrity: %d visitor(s) flagged, %d vote(s) stopped counting",
                       len(new), marked)
    return {"flagged": len(new), "votes_marked": marked}


@receiver(visitor_flag_cleared, dispatch_uid="battles-flag-cleared")
def votes_count_again(sender, flag, **kwargs) -> None:  # noqa: ARG001 - a signal receiver
    """Staff cleared a flag: the votes it stopped counting count again."""
    if flag.mode != MODE:
        return
    kind, _, key = flag.visitor.partition(":")
    votes = (Vote.objects.filter(battle__session_key=key) if kind == "session"
             else Vote.objects.filter(voter=flag.visitor))
    votes.filter(exclusion_reason__startswith=FLAGGED_PREFIX).update(
        counts_for_rating=True, exclusion_reason="")

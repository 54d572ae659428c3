"""The crowd: one blind vote per debate and session, wagers of debate points, payouts.

* A viewer votes pro, con or tie once (the platform's vote-once rule); the vote reveals the
  models to that viewer. Revealing without voting is allowed and forfeits the vote.
* A vote may carry a wager of the session's debate points (1,000 to start) until judging
  starts. When the AI verdict is in, the pool of all wagers is shared among those who called
  it, in proportion to their stakes (parimutuel); if nobody called it, every stake is given
  back. Payouts are whole points and always sum to the pool (largest remainders), so points
  are never made or lost by settling.
* The crowd's majority (pro, con or tie when they draw) is kept on the debate for its board;
  it counts only the votes the integrity rules count (:mod:`debates.integrity`: a visitor's
  daily cap, flagged visitors), and moves when a vote stops or starts counting.
* A debate whose creator chose a model or a persona is ``chosen``: its creator knows who is
  who (the page shows each persona's side), so the creator's own vote never counts; a chosen
  debate's crowd result is its other viewers'.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest

from arena.contests.voting import vote_once
from arena.errors import RuleError
from debates.integrity import COUNTED_VOTES
from debates.majority import majority_refresh
from debates.models import (
    STARTING_POINTS,
    CrowdChoice,
    CrowdVote,
    Debate,
    DebateStatus,
    DebateStep,
    PointsAccount,
    StepKind,
)
from debates.streams import announce_debate

ALREADY_VOTED = "You already voted on this debate (one vote per debate)."
ALREADY_REVEALED = "You revealed the models of this debate, which gives up your vote."
NOT_VOTABLE = ("This debate ended before it could be judged (it failed or was cancelled): "
               "there is nothing to vote on.")
NOT_STARTED = "Wait for the first speech before voting."
BAD_CHOICE = "Vote pro, con or tie."
WAGERS_CLOSED = "Wagers closed when judging started; vote without a wager."
NOT_ENOUGH_POINTS = "You have {points:,} debate points; wager at most that."
BAD_WAGER = "A wager is a whole number of points, 0 or more."
REVEALED = "revealed the models without voting"
CHOSEN_BY_CREATOR = "the voter started this debate and chose its models or personas"


def points_of(session_key: str) -> int:
    account = PointsAccount.objects.filter(session_key=session_key).first()
    return account.points if account else STARTING_POINTS


def points_merge(old_key: str, new_key: str) -> None:
    """A visitor's points join another key's (``Mode.merge_visitor``): what the old key won or
    lost, against the starting grant, is added to the new key's balance (never below 0), so
    a new anonymous session's free grant cannot be added to an account's again and again."""
    old = PointsAccount.objects.select_for_update().filter(session_key=old_key).first()
    if old is None:
        return
    PointsAccount.objects.select_for_update().get_or_create(session_key=new_key)
    PointsAccount.objects.filter(pk=new_key).update(
        points=Greatest(F("points") + (old.points - STARTING_POINTS), Value(0)))
    old.delete()


def wagers_open(debate: Debate) -> bool:
    return (debate.status in (DebateStatus.INITIALIZING, DebateStatus.IN_PROGRESS,
                              DebateStatus.PAUSED)
            and not DebateStep.objects.filter(debate=debate, kind=StepKind.JUDGE).exists())


def _take_points(session_key: str, wager: int) -> None:
    account, _ = PointsAccount.objects.select_for_update().get_or_create(
        session_key=session_key)
    if wager > account.points:
        raise RuleError(NOT_ENOUGH_POINTS.format(points=account.points), status=422)
    PointsAccount.objects.filter(pk=session_key).update(points=F("points") - wager)


def debate_vote(*, debate_id, session_key: str, choice: str, wager: int = 0,
               voter: str = "", publish_text: bool = False) -> CrowdVote:
    """``voter``: the client address as :func:`arena.contests.flags.voter_of` keys it;
    ``publish_text``: the voter lets the motion and speeches be published in the open data
    releases (a listed debate's only)."""
    if choice not in (CrowdChoice.PRO, CrowdChoice.CON, CrowdChoice.TIE):
        raise RuleError(BAD_CHOICE, status=422)
    if not isinstance(wager, int) or isinstance(wager, bool) or wager < 0:
        raise RuleError(BAD_WAGER, status=422)

    def record(debate: Debate) -> CrowdVote:
        if debate.status in (DebateStatus.FAILED, DebateStatus.CANCELLED):
            raise RuleError(NOT_VOTABLE, status=409)
        if not debate.turns.exists():
            raise RuleError(NOT_STARTED, status=409)
        if wager and not wagers_open(debate):
            raise RuleError(WAGERS_CLOSED, status=409)
        if wager:
            _take_points(session_key, wager)
        if debate.chosen and session_key == debate.session_key:
            eligibility = {"counts_for_rating": False, "exclusion_reason": CHOSEN_BY_CREATOR}
        else:
            eligibility = COUNTED_VOTES.eligibility(session_key=session_key, voter=voter)
        vote = CrowdVote.objects.create(
            debate=debate, session_key=session_key, choice=choice, wager=wager, voter=voter,
            publish_text=publish_text, **eligibility)
        majority_refresh(debate)
        return vote

    def has_vote(debate: Debate) -> bool:
        earlier = CrowdVote.objects.filter(debate=debate, session_key=session_key).first()
        if earlier is not None and earlier.choice == CrowdChoice.REVEALED:
            raise RuleError(ALREADY_REVEALED, status=409)
        return earlier is not None

    return vote_once(
        lock=lambda: Debate.objects.select_for_update().get(pk=debate_id),
        has_vote=has_vote, record=record, already_voted=ALREADY_VOTED,
        announce=lambda v: announce_debate(debate_id, crowd=True))


def crowd_reveal(*, debate_id, session_key: str) -> CrowdVote:
    """Show this viewer the models without a vote (it forfeits the vote); a viewer who has
    voted or revealed already keeps what they have."""
    with transaction.atomic():
        Debate.objects.select_for_update().get(pk=debate_id)
        vote, _ = CrowdVote.objects.get_or_create(
            debate_id=debate_id, session_key=session_key,
            defaults={"choice": CrowdChoice.REVEALED, "counts_for_rating": False,
                      "exclusion_reason": REVEALED})
    return vote


def parimutuel(stakes: list[tuple[object, str, int]], winner: str) -> dict[object, int]:
    """Payout per key of ``(key, choice, stake)``: the pool shared by the stakes on
    ``winner`` (largest remainders, ties to the earlier entry); everyone's stake back when
    no stake was on it. Sums to the pool."""
    pool = sum(stake for _, _, stake in stakes)
    winners = [(key, stake) for key, choice, stake in stakes if choice == winner and stake]
    if not winners:
        return {key: stake for key, _, stake in stakes}
    backed = sum(stake for _, stake in winners)
    shares = {key: pool * stake // backed for key, stake in winners}
    rest = pool - sum(shares.values())
    by_remainder = sorted(range(len(winners)),
                          key=lambda i: (-(pool * winners[i][1] % backed), i))
    for i in by_remainder[:rest]:
        shares[winners[i][0]] += 1
    return {key: shares.get(key, 0) for key, _, _ in stakes}


def wagers_settle(*, debate: Debate) -> None:
    """Pay out the debate's open wagers on its AI verdict (inside the caller's transaction;
    a wager already paid is never paid again)."""
    open_votes = list(debate.votes.select_for_update().filter(wager__gt=0,
                                                              payout__isnull=True))
    if not open_votes:
        return
    payouts = parimutuel([(v.pk, v.choice, v.wager) for v in open_votes], debate.ai_winner)
    for vote in open_votes:
        paid = payouts[vote.pk]
        CrowdVote.objects.filter(pk=vote.pk).update(payout=paid)
        if paid:
            account, _ = PointsAccount.objects.get_or_create(session_key=vote.session_key)
            PointsAccount.objects.filter(pk=account.pk).update(points=F("points") + paid)

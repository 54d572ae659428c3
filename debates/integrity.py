"""Vote integrity for debates: which crowd votes count for the crowd board under the
platform's rules (:mod:`arena.contests.counting`: the daily cap, flagged visitors). A vote
that stops or starts counting moves its debate's crowd majority."""

from __future__ import annotations

from arena.contests.counting import CountedVotes
from arena.contests.integrity import CastVote
from debates.majority import majority_refresh
from debates.models import CrowdChoice, CrowdVote, Debate, Position

SIDES = {CrowdChoice.PRO: "pro", CrowdChoice.CON: "con"}


def _cast(choice, a_position, model_a, model_b, at) -> CastVote | None:
    if choice == CrowdChoice.REVEALED:
        return None
    model_pro, model_con = (model_a, model_b) if a_position == Position.PRO else (model_b, model_a)
    pair = ((model_pro, model_con) if choice == CrowdChoice.PRO
            else (model_con, model_pro) if choice == CrowdChoice.CON else (None, None))
    return CastVote(SIDES.get(choice), *pair, at)


def _recount(votes) -> None:
    for debate in Debate.objects.filter(pk__in=votes.values("debate_id")):
        majority_refresh(debate)


COUNTED_VOTES = CountedVotes(
    mode="debates", model=CrowdVote, session="session_key",
    facts=("choice", "debate__model_a_position", "debate__model_a_id", "debate__model_b_id"),
    cast=_cast,
    recounted=_recount)

"""Vote integrity for text battles: which votes count for ratings under the platform's rules
(:mod:`arena.contests.counting`: the daily cap, flagged visitors)."""

from __future__ import annotations

from arena.contests.counting import CountedVotes
from arena.contests.integrity import CastVote
from arena.contests.voting import VoteChoice, Winner
from battles.models import Vote

SIDES = {VoteChoice.LEFT_BETTER: "left", VoteChoice.RIGHT_BETTER: "right"}


def _cast(choice, winner, model_a, model_b, at) -> CastVote:
    pair = ((model_a, model_b) if winner == Winner.MODEL_A
            else (model_b, model_a) if winner == Winner.MODEL_B else (None, None))
    return CastVote(SIDES.get(choice), *pair, at)


COUNTED_VOTES = CountedVotes(
    mode="battles", model=Vote, session="session_key",
    facts=("choice", "winner", "model_a_id", "model_b_id"), cast=_cast)

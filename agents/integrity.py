"""Vote integrity for voice battles: which votes count for the voice boards under the
platform's rules (:mod:`arena.contests.counting`: the daily cap, flagged visitors)."""

from __future__ import annotations

from agents.models import AgentVote, Overall
from arena.contests.counting import CountedVotes
from arena.contests.integrity import CastVote


def _cast(overall, config_a, config_b, at) -> CastVote:
    pair = ((config_a, config_b) if overall == Overall.A
            else (config_b, config_a) if overall == Overall.B else (None, None))
    return CastVote(overall if overall != Overall.TIE else None, *pair, at)


COUNTED_VOTES = CountedVotes(
    mode="agents", model=AgentVote, session="session_key",
    facts=("overall", "battle__config_a_id", "battle__config_b_id"), cast=_cast)

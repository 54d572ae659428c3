"""Pure rating engines (NumPy/SciPy only, no Django): Elo, Bradley–Terry, Glicko-2.

Outcome codes are shared by all engines, see :mod:`leaderboard.ratings.outcomes`.
"""

from .bradley_terry import (
    BTResult,
    bootstrap_bradley_terry,
    fit_bradley_terry,
    rank_upper_bound,
    sandwich_bradley_terry,
)
from .elo import elo_ratings, elo_update
from .glicko2 import rate_period, rate_periods
from .outcomes import A_WINS, B_WINS, BOTH_BAD, TIE, parse_outcome
from .votes_file import Votes, VotesFileError, group_outcomes, read_votes

__all__ = [
    "A_WINS",
    "B_WINS",
    "BOTH_BAD",
    "TIE",
    "BTResult",
    "Votes",
    "VotesFileError",
    "bootstrap_bradley_terry",
    "elo_ratings",
    "elo_update",
    "fit_bradley_terry",
    "group_outcomes",
    "parse_outcome",
    "rank_upper_bound",
    "rate_period",
    "rate_periods",
    "read_votes",
    "sandwich_bradley_terry",
]

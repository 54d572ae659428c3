"""The style-controlled half of a board run: for a Bradley–Terry board with styled votes,
each entry's style-controlled rating, interval and ranks, and the style coefficients."""

from __future__ import annotations

import logging

from django.conf import settings

from leaderboard import compute
from leaderboard.boards import Board

logger = logging.getLogger(__name__)


def style_columns(board: Board, grouped: compute.Grouped, rated, active) -> dict:
    """The style-controlled columns of each entry (per subject index) and the coefficients,
    for a Bradley–Terry board with styled votes; nothing to add otherwise."""
    if board.styled_votes is None or board.primary_method != "bt":
        return {"coefficients": None}
    limit = settings.ARENA_LEADERBOARD_STYLE_MAX_VOTES
    if grouped.total > limit:
        logger.info("board %s: %d votes, over ARENA_LEADERBOARD_STYLE_MAX_VOTES (%d): "
                    "no style control this run", board.name, grouped.total, limit)
        return {"coefficients": None}
    found = compute.fit_style_board(board.styled_votes(grouped.subjects), grouped.subjects)
    if found is None:
        return {"coefficients": None}
    fit, coefficients = found
    fit = compute.shrink_provisional(fit, grouped, ~rated)
    return {
        "coefficients": coefficients,
        "style_rating": fit.rating.tolist(),
        "style_ci_lower": fit.ci_lower.tolist(),
        "style_ci_upper": fit.ci_upper.tolist(),
        "style_rank_ub": compute.ranks(fit.ci_lower, fit.ci_upper, rated).tolist(),
        "style_rank_ub_active": compute.ranks(fit.ci_lower, fit.ci_upper, active).tolist(),
    }

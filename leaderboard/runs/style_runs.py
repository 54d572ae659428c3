"""The style-controlled half of a board run: for a Bradley–Terry board with styled votes,
each entry's style-controlled rating, interval and ranks, and the style coefficients."""

from __future__ import annotations

import logging

from django.conf import settings

from leaderboard.boards import Board
from leaderboard.runs import compute
from leaderboard.runs.scans import VoteScan

logger = logging.getLogger(__name__)


def style_columns(board: Board, grouped: compute.Grouped, rated, active,
                  scan: VoteScan | None, position) -> dict:
    """The style-controlled columns of each entry (per subject index) and the coefficients,
    for a Bradley–Terry board whose votes were read with their style (``scan``, whose
    subject i is ``grouped``'s ``position[i]``); nothing to add otherwise."""
    if scan is None or board.primary_method != "bt":
        return {"coefficients": None}
    limit = settings.ARENA_LEADERBOARD_STYLE_MAX_VOTES
    if grouped.total > limit:
        logger.info("board %s: %d votes, over ARENA_LEADERBOARD_STYLE_MAX_VOTES (%d): "
                    "no style control this run", board.name, grouped.total, limit)
        return {"coefficients": None}
    if scan.a.size == 0:
        return {"coefficients": None}
    fit, coefficients = compute.fit_style(position[scan.a], position[scan.b], scan.code,
                                          scan.style_a, scan.style_b, grouped.n)
    fit = compute.shrink_provisional(fit, grouped, ~rated)
    return {
        "coefficients": coefficients,
        "style_rating": fit.rating.tolist(),
        "style_ci_lower": fit.ci_lower.tolist(),
        "style_ci_upper": fit.ci_upper.tolist(),
        "style_rank_ub": compute.ranks(fit.ci_lower, fit.ci_upper, rated).tolist(),
        "style_rank_ub_active": compute.ranks(fit.ci_lower, fit.ci_upper, active).tolist(),
    }

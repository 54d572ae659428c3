"""A board's current estimate of each subject, for whoever chooses what to ask next (the
battle pairing): rating and standard error from the latest snapshot, no fitting."""

from __future__ import annotations

from arena.contests.proportions import Z95
from leaderboard.models import SnapshotEntry
from leaderboard.pages.selectors import snapshot_latest
from leaderboard.ratings.provisional import PRIOR_MEAN, PRIOR_SD


def board_estimates(*, board: str, subjects: list[str]) -> dict[str, tuple[float, float]]:
    """``{subject: (rating, standard error)}``; a subject the board has not rated yet gets
    the provisional prior (1000 ± 200), the widest anyone starts with."""
    estimates = dict.fromkeys(subjects, (PRIOR_MEAN, PRIOR_SD))
    snapshot = snapshot_latest(board=board)
    if snapshot is None:
        return estimates
    rows = SnapshotEntry.objects.filter(snapshot=snapshot, subject__in=subjects).values_list(
        "subject", "rating", "ci_lower", "ci_upper")
    for subject, rating, lower, upper in rows:
        se = (upper - lower) / (2 * Z95)
        estimates[subject] = (rating, se if se > 0 else PRIOR_SD)
    return estimates

"""The four SVG plots of a board page, drawn from its snapshot (no fitting), memoised."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from django.conf import settings

from leaderboard.pages import plots
from leaderboard.pages.selectors import BoardPage
from leaderboard.runs.compute import expected_win_rate


def board_plots(*, page: BoardPage) -> dict[str, str]:
    """The four SVG plots of a page, drawn from its snapshot (cheap: no fitting).

    The interval chart and the average win rate follow the page's filters; the pairwise
    plots show the top models of the board (deprecated ones only when shown). Drawing is
    memoised on the plotted data itself, so the default view of a snapshot is drawn once
    per process and any change in the data draws afresh.
    """
    snapshot = page.snapshot
    if snapshot is None:
        return {}
    by_rating = sorted(page.rows, key=lambda r: -r.e.rating)
    points = tuple(
        plots.Interval(r.e.name, r.e.rating, r.e.ci_lower, r.e.ci_upper) for r in by_rating
    )
    out = dict(zip(("ci", "winrate"), _model_plots(points, page.method_label), strict=True))

    every = page.entries
    data = snapshot.plot_data or {}
    subjects = data.get("subjects", [])
    keep = [
        i for i, s in enumerate(subjects)
        if s in every and (page.query.include_deprecated or not every[s].deprecated)
    ][: settings.ARENA_LEADERBOARD_PLOT_MODELS]
    remap = {old: new for new, old in enumerate(keep)}
    pairs = tuple(
        (remap[i], remap[j], wi, wj, t, bb)
        for i, j, wi, wj, t, bb in data.get("pairs", [])
        if i in remap and j in remap
    )
    names = tuple(every[subjects[i]].name for i in keep)
    out["winfraction"], out["battles"] = _pair_plots(names, pairs)
    return out


@lru_cache(maxsize=64)
def _model_plots(points: tuple[plots.Interval, ...], method_label: str) -> tuple[str, str]:
    ci = plots.confidence_interval_chart(points, title=f"{method_label} ratings with 95% intervals")
    ratings = np.array([p.rating for p in points])
    expected = expected_win_rate(ratings, np.ones(ratings.size, dtype=bool))
    order = np.argsort(-expected, kind="stable")
    winrate = plots.bar_chart(
        [points[i].name for i in order],
        [float(expected[i]) for i in order],
        title="Average win rate against all others (predicted, no ties)",
    )
    return ci, winrate


@lru_cache(maxsize=64)
def _pair_plots(names: tuple[str, ...], pairs: tuple) -> tuple[str, str]:
    frac, count = plots.pair_matrices(len(names), pairs)
    return (
        plots.heatmap(names, frac, title="Fraction of wins in non-tied battles",
                      kind="winfraction"),
        plots.heatmap(names, count, title="Battle count per pair", kind="battles", fmt="count"),
    )

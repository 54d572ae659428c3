"""The page's plots, drawn on the server as inline SVG with the leaderboard's line chart
(:func:`leaderboard.pages.plots.line_chart`): no script, so the Content-Security-Policy
holds, and the theme's colours apply."""

from __future__ import annotations

from leaderboard.pages.plots import Series, line_chart
from ops.ratings import BoardStability
from ops.work import VoteDays


def votes_plot(votes: VoteDays) -> str:
    return line_chart(
        [Series(mode, counts) for mode, counts in votes.per_mode.items()],
        [f"{day:%m-%d}" for day in votes.days],
        title="Votes per day per mode", kind="ops-votes", y_label="votes", width=560,
        height=220,
        empty="No votes yet.")


def uncertainty_plot(stability: BoardStability) -> str:
    label = stability.uncertainty_label
    return line_chart(
        [Series(f"median {label}", [p.uncertainty for p in stability.runs])],
        [f"{p.at:%m-%d %H:%M}" for p in stability.runs],
        title=f"{stability.title}: median {label} over its last runs",
        kind=f"ops-rd-{stability.board}", y_label=label, width=360, height=160,
        empty="No rated model yet.")

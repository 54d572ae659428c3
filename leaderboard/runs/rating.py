"""One board's numbers, from the outcomes a run read: the fit its method asks for, each
subject's tallies, ranks and provisional mark, the style-controlled fit where the votes carry
their style, and the pairs the plots show. No database access here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from leaderboard.boards import Board
from leaderboard.ratings import parse_outcome
from leaderboard.runs import compute
from leaderboard.runs.reading import BoardOutcomes

logger = logging.getLogger(__name__)

BAD_CI_METHOD = "Unknown interval method {value!r}: use sandwich or bootstrap."

Progress = Callable[[str], None]


@dataclass(frozen=True)
class FitOptions:
    ci_method: str  # one of compute.CI_METHODS
    rounds: int  # bootstrap rounds
    min_votes: int  # fewer, and a subject is provisional


def fit_options(*, ci_method: str | None, bootstrap_rounds: int | None) -> FitOptions:
    """The run's options: asked-for bootstrap rounds mean bootstrap intervals; what is not
    asked for comes from the settings."""
    if bootstrap_rounds is not None and bootstrap_rounds > 0:
        ci_method = ci_method or "bootstrap"
    ci_method = ci_method or settings.ARENA_LEADERBOARD_CI
    if ci_method not in compute.CI_METHODS:
        raise ValueError(BAD_CI_METHOD.format(value=ci_method))
    return FitOptions(ci_method, bootstrap_rounds or settings.ARENA_LEADERBOARD_BOOTSTRAP_ROUNDS,
                      settings.ARENA_LEADERBOARD_MIN_VOTES)


@dataclass
class Numbers:
    """What a snapshot stores of one fit: per subject (in ``grouped.subjects`` order) and for
    the board."""

    fit: compute.Fit
    fit_ms: int
    tally: compute.Tally
    rated: np.ndarray  # enough votes to be ranked (not provisional)
    deprecated: np.ndarray
    rank_ub: np.ndarray
    rank_ub_active: np.ndarray  # among rated subjects that are not deprecated
    style_coefficients: list | None  # None: no style-controlled fit
    style: dict[str, list]  # the style-controlled columns of each entry, when fitted
    plot_data: dict


def board_numbers(board: Board, outcomes: BoardOutcomes, options: FitOptions,
                  step: Progress) -> Numbers:
    grouped = outcomes.grouped
    started = time.perf_counter()
    fit = _fit(board.primary_method, outcomes, options)
    fit_ms = int((time.perf_counter() - started) * 1000)
    step("fit")

    tally = compute.tally(grouped)
    deprecated = np.array([outcomes.subjects[s].deprecated for s in grouped.subjects],
                          dtype=bool)
    rated = tally.votes >= options.min_votes
    fit = compute.shrink_provisional(fit, grouped, ~rated)
    active = rated & ~deprecated
    rank_ub = compute.ranks(fit.ci_lower, fit.ci_upper, rated)
    rank_ub_active = compute.ranks(fit.ci_lower, fit.ci_upper, active)
    step("tally")
    coefficients, style = _style_controlled(board, outcomes, rated, active)
    step("style control")
    plot_data = compute.plot_data(grouped, fit, rated, active,
                                  limit=settings.ARENA_LEADERBOARD_PLOT_MODELS)
    return Numbers(fit, fit_ms, tally, rated, deprecated, rank_ub, rank_ub_active,
                   coefficients, style, plot_data)


def _fit(method: str, outcomes: BoardOutcomes, options: FitOptions) -> compute.Fit:
    grouped = outcomes.grouped
    if method == "glicko2":
        return compute.fit_glicko2(grouped.n,
                                   compute.period_groups(outcomes.periods, grouped.subjects))
    if method == "elo":
        index = {s: i for i, s in enumerate(grouped.subjects)}
        rows = [r for r in outcomes.ordered if r[0] in index and r[1] in index]
        a = np.array([index[r[0]] for r in rows], dtype=np.int64)
        b = np.array([index[r[1]] for r in rows], dtype=np.int64)
        code = np.array([parse_outcome(str(r[2])) for r in rows], dtype=np.int64)
        return compute.fit_elo(grouped.subjects, a, b, code, ci_method=None)
    return compute.fit_bt(grouped, ci_method=options.ci_method, rounds=options.rounds)


def _style_controlled(board: Board, outcomes: BoardOutcomes, rated,
                      active) -> tuple[list | None, dict[str, list]]:
    """The style coefficients and the style-controlled columns of each entry, for a
    Bradley–Terry board whose votes were read with their style (the scan, whose subject i
    is ``grouped``'s ``position[i]``); nothing otherwise."""
    grouped, scan, position = outcomes.grouped, outcomes.scan, outcomes.position
    if scan is None or board.primary_method != "bt":
        return None, {}
    limit = settings.ARENA_LEADERBOARD_STYLE_MAX_VOTES
    if grouped.total > limit:
        logger.info("board %s: %d votes, over ARENA_LEADERBOARD_STYLE_MAX_VOTES (%d): "
                    "no style control this run", board.name, grouped.total, limit)
        return None, {}
    if scan.a.size == 0:
        return None, {}
    fit, coefficients = compute.fit_style(position[scan.a], position[scan.b], scan.code,
                                          scan.style_a, scan.style_b, grouped.n)
    fit = compute.shrink_provisional(fit, grouped, ~rated)
    return coefficients, {
        "style_rating": fit.rating.tolist(),
        "style_ci_lower": fit.ci_lower.tolist(),
        "style_ci_upper": fit.ci_upper.tolist(),
        "style_rank_ub": compute.ranks(fit.ci_lower, fit.ci_upper, rated).tolist(),
        "style_rank_ub_active": compute.ranks(fit.ci_lower, fit.ci_upper, active).tolist(),
    }

"""From grouped outcome rows to a board's numbers: tallies, fit, intervals, ranks, pairs.

No database access here: services hand in rows (from a board's SQL aggregation or a votes
file) and store what comes back. The math itself lives in :mod:`leaderboard.ratings`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from arena.contests.proportions import Z95
from leaderboard.ratings import (
    A_WINS,
    B_WINS,
    BOTH_BAD,
    TIE,
    bootstrap_bradley_terry,
    elo_ratings,
    parse_outcome,
    rank_upper_bound,
    sandwich_bradley_terry,
)
from leaderboard.ratings.glicko2 import (
    DEFAULT_RATING,
    DEFAULT_RD,
    DEFAULT_VOLATILITY,
    rate_period_arrays,
)
from leaderboard.ratings.outcomes import BT_LABELS
from leaderboard.ratings.provisional import shrink_provisional as _shrink
from leaderboard.ratings.style_control import (
    CONFOUNDED,
    CONSTANT,
    FITTED,
    SEPARATES,
    STYLE_ELEMENTS,
    fit_style_controlled,
    style_features,
)

CI_METHODS = ("bootstrap", "sandwich")


class OutcomeError(ValueError):
    """A row a rating engine cannot use (unknown winner, a model against itself)."""


@dataclass
class Grouped:
    """Outcomes grouped by (a, b, outcome code) with counts; ``subjects[i]`` is index i."""

    subjects: list[str]
    a: np.ndarray
    b: np.ndarray
    code: np.ndarray
    count: np.ndarray

    @property
    def n(self) -> int:
        return len(self.subjects)

    @property
    def total(self) -> int:
        return int(self.count.sum())


@dataclass
class Tally:
    votes: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    ties: np.ndarray
    both_bad: np.ndarray

    @property
    def win_rate(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.votes > 0, self.wins / np.maximum(self.votes, 1), 0.0)


@dataclass
class Fit:
    rating: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    method: str
    ci_method: str
    rounds: int = 0
    volatility: np.ndarray | None = None  # Glicko-2's σ per subject; None for other methods


@dataclass
class PairTable:
    """Per unordered pair ``lo < hi``: wins of each side, ties, both-bad votes."""

    lo: np.ndarray
    hi: np.ndarray
    wins_lo: np.ndarray
    wins_hi: np.ndarray
    ties: np.ndarray
    both_bad: np.ndarray


def group_rows(rows: Iterable[tuple[str, str, str, int]]) -> Grouped:
    """Turn ``(a, b, winner, count)`` rows into index arrays (subjects sorted by key)."""
    rows = list(rows)
    codes: dict[str, int] = {}
    keys: set[str] = set()
    for a, b, winner, _n in rows:
        keys.add(a)
        keys.add(b)
        if winner not in codes:
            try:
                codes[winner] = parse_outcome(str(winner))
            except ValueError as exc:
                raise OutcomeError(str(exc)) from None
        if a == b:
            raise OutcomeError(f"{a!r} is compared with itself")
    subjects = sorted(keys)
    index = {key: i for i, key in enumerate(subjects)}
    n_rows = len(rows)
    a_idx = np.fromiter((index[r[0]] for r in rows), np.int64, n_rows)
    b_idx = np.fromiter((index[r[1]] for r in rows), np.int64, n_rows)
    code = np.fromiter((codes[r[2]] for r in rows), np.int64, n_rows)
    count = np.fromiter((r[3] for r in rows), np.int64, n_rows)
    keep = count > 0
    return Grouped(subjects, a_idx[keep], b_idx[keep], code[keep], count[keep])


def tally(g: Grouped) -> Tally:
    n, w = g.n, g.count
    votes = np.bincount(g.a, w, n) + np.bincount(g.b, w, n)

    def per(code: int, side: np.ndarray) -> np.ndarray:
        return np.bincount(side, np.where(g.code == code, w, 0), n)

    wins = per(A_WINS, g.a) + per(B_WINS, g.b)
    losses = per(B_WINS, g.a) + per(A_WINS, g.b)
    ties = per(TIE, g.a) + per(TIE, g.b)
    both_bad = per(BOTH_BAD, g.a) + per(BOTH_BAD, g.b)
    as_int = lambda x: np.rint(x).astype(np.int64)  # noqa: E731
    return Tally(as_int(votes), as_int(wins), as_int(losses), as_int(ties), as_int(both_bad))


def pair_table(g: Grouped) -> PairTable:
    """Collapse ordered rows into unordered pairs (position does not matter here)."""
    n = g.n
    lo = np.minimum(g.a, g.b)
    hi = np.maximum(g.a, g.b)
    a_is_lo = g.a == lo
    lo_won = ((g.code == A_WINS) & a_is_lo) | ((g.code == B_WINS) & ~a_is_lo)
    hi_won = ((g.code == B_WINS) & a_is_lo) | ((g.code == A_WINS) & ~a_is_lo)
    keys, inv = np.unique(lo * n + hi, return_inverse=True)
    m = keys.size

    def add(mask: np.ndarray) -> np.ndarray:
        return np.rint(np.bincount(inv, np.where(mask, g.count, 0), m)).astype(np.int64)

    return PairTable(
        lo=keys // n,
        hi=keys % n,
        wins_lo=add(lo_won),
        wins_hi=add(hi_won),
        ties=add(g.code == TIE),
        both_bad=add(g.code == BOTH_BAD),
    )


def fit_bt(g: Grouped, *, ci_method: str = "sandwich", rounds: int = 100, seed: int = 0) -> Fit:
    """Bradley–Terry ratings (mean 1000) with 95 % intervals."""
    if g.n == 0:
        empty = np.zeros(0)
        return Fit(empty, empty, empty, "bt", ci_method, 0)
    args = (g.a, g.b, g.code, g.count, g.n)
    if ci_method == "bootstrap":
        res = bootstrap_bradley_terry(*args, n_rounds=rounds, seed=seed)
        return Fit(res.ratings, res.ci_lower, res.ci_upper, "bt", "bootstrap", rounds)
    if ci_method == "sandwich":
        res = sandwich_bradley_terry(*args)
        return Fit(res.ratings, res.ci_lower, res.ci_upper, "bt", "sandwich", 0)
    raise ValueError(f"unknown interval method {ci_method!r} (use one of {CI_METHODS})")


def shrink_provisional(fit: Fit, g: Grouped, provisional: np.ndarray) -> Fit:
    """A Bradley–Terry fit with each provisional model at its estimate under a weak prior
    (:mod:`leaderboard.ratings.provisional`); other methods carry their own uncertainty."""
    if fit.method != "bt" or g.n == 0:
        return fit
    rating, lower, upper = _shrink(fit.rating, fit.ci_lower, fit.ci_upper, g.a, g.b, g.code,
                                   g.count, provisional)
    return Fit(rating, lower, upper, fit.method, fit.ci_method, fit.rounds)


# Why a style element is not in a style-controlled fit, as a board says it.
STYLE_LEFT_OUT = {
    CONSTANT: "no differences to learn from",
    CONFOUNDED: "left out: these votes cannot tell its effect from the models'",
    SEPARATES: "left out: the votes split perfectly on it, so it has no finite estimate",
}


def fit_style(a, b, code, style_a, style_b, n: int) -> tuple[Fit, list[list]]:
    """Style-controlled Bradley–Terry (sandwich intervals) of per-vote arrays; the fit and
    the style coefficients as ``[element, value, lower, upper, status]`` (status: fitted,
    or why the element was left out: :data:`STYLE_LEFT_OUT`)."""
    res = fit_style_controlled(a, b, code, style_features(style_a, style_b), n)
    coefficients = [[name, float(v), float(lo), float(hi), status]
                    for name, v, lo, hi, status in zip(
                        STYLE_ELEMENTS, res.coefficients, res.coef_lower, res.coef_upper,
                        res.status, strict=True)]
    return Fit(res.ratings, res.ci_lower, res.ci_upper, "bt", "sandwich", 0), coefficients


def style_coefficient(row: list) -> dict:
    """One stored coefficient as the page and the API show it (rows stored before the
    status was kept: fitted unless the interval is a point, which meant no differences)."""
    name, value, lower, upper = row[:4]
    status = row[4] if len(row) > 4 else (CONSTANT if lower == upper else FITTED)
    return {"element": name, "value": value, "ci_lower": lower, "ci_upper": upper,
            "fitted": status == FITTED, "note": STYLE_LEFT_OUT.get(status, "")}


def fit_elo(
    subjects: list[str],
    a: np.ndarray,
    b: np.ndarray,
    code: np.ndarray,
    *,
    ci_method: str | None = "bootstrap",
    rounds: int = 100,
    seed: int = 0,
) -> Fit:
    """Elo over votes in the given order, or FastChat's bootstrap of it.

    Without a bootstrap the rating is the online Elo after the votes in order (no interval).
    With one, each round replays votes resampled with replacement in random order; as in
    FastChat's offline analysis the rating is the median of the rounds and the bounds are
    the 2.5 / 97.5 percentiles.
    """
    n = len(subjects)
    rating = elo_ratings(a, b, code, n)
    if ci_method != "bootstrap" or rounds < 1 or a.size == 0:
        return Fit(rating, rating.copy(), rating.copy(), "elo", "none", 0)
    rng = np.random.default_rng(seed)
    samples = np.empty((rounds, n))
    for i in range(rounds):
        pick = rng.integers(0, a.size, a.size)
        samples[i] = elo_ratings(a[pick], b[pick], code[pick], n)
    lower, median, upper = np.percentile(samples, [2.5, 50.0, 97.5], axis=0)
    return Fit(median, lower, upper, "elo", "bootstrap", rounds)


def fit_glicko2(
    n: int, periods: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
) -> Fit:
    """Glicko-2 over consecutive rating periods of grouped (a, b, code, count) arrays.

    Ties and both-bad votes score 0.5 (as in Bradley–Terry); bounds are rating ± 1.96 RD.
    """
    rating = np.full(n, DEFAULT_RATING)
    rd = np.full(n, DEFAULT_RD)
    vol = np.full(n, DEFAULT_VOLATILITY)
    for a, b, code, count in periods:
        if a.size == 0:
            continue
        reps = np.asarray(count, dtype=np.int64)
        player = np.repeat(a, reps)
        opponent = np.repeat(b, reps)
        score = np.repeat(BT_LABELS[code], reps)
        rating, rd, vol = rate_period_arrays(rating, rd, vol, player, opponent, score)
    return Fit(rating, rating - Z95 * rd, rating + Z95 * rd, "glicko2", "rd", 0, vol)


def period_groups(
    rows: Iterable[tuple[datetime, str, str, str, int]], subjects: list[str]
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Split ``(period, a, b, winner, count)`` rows (sorted by period) into index arrays."""
    index = {key: i for i, key in enumerate(subjects)}
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    current = object()
    bucket: list[tuple[int, int, int, int]] = []

    def flush() -> None:
        if bucket:
            arr = np.array(bucket, dtype=np.int64)
            out.append((arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]))

    for period, a, b, winner, count in rows:
        if period != current:
            flush()
            bucket = []
            current = period
        if a in index and b in index and count > 0:
            bucket.append((index[a], index[b], parse_outcome(str(winner)), int(count)))
    flush()
    return out


def ranks(lower: np.ndarray, upper: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """FastChat's Rank (UB) among the models in ``mask``; 0 for the others."""
    out = np.zeros(lower.size, dtype=np.int64)
    if mask.any():
        out[mask] = rank_upper_bound(lower[mask], upper[mask])
    return out


def expected_win_rate(rating: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean predicted chance of beating each other model in ``mask`` (uniform pairing, no ties).

    FastChat's "average win rate against all other models"; 0 outside ``mask``.
    """
    out = np.zeros(rating.size)
    idx = np.flatnonzero(mask)
    if idx.size < 2:
        return out
    r = rating[idx]
    p = 1.0 / (1.0 + 10.0 ** ((r[None, :] - r[:, None]) / 400.0))
    np.fill_diagonal(p, 0.0)
    out[idx] = p.sum(axis=1) / (idx.size - 1)
    return out


def plot_data(grouped: Grouped, fit: Fit, rated: np.ndarray, active: np.ndarray, *,
              limit: int) -> dict:
    """Pair statistics among the models the plots show: top N rated ∪ top N rated active."""
    order = np.argsort(-fit.rating, kind="stable")
    top = [i for i in order if rated[i]][:limit]
    top_active = [i for i in order if rated[i] and active[i]][:limit]
    chosen = sorted(set(top) | set(top_active), key=lambda i: -fit.rating[i])
    if not chosen:
        return {"subjects": [], "pairs": []}
    pos = {int(i): k for k, i in enumerate(chosen)}
    pairs = pair_table(grouped)
    rows = []
    for lo, hi, w_lo, w_hi, ties, bb in zip(
        pairs.lo.tolist(), pairs.hi.tolist(), pairs.wins_lo.tolist(), pairs.wins_hi.tolist(),
        pairs.ties.tolist(), pairs.both_bad.tolist(), strict=True,
    ):
        if lo in pos and hi in pos:
            rows.append([pos[lo], pos[hi], w_lo, w_hi, ties, bb])
    return {"subjects": [grouped.subjects[i] for i in chosen], "pairs": rows}

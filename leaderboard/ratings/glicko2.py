"""Glicko-2 ratings, one rating period at a time, vectorised over all players.

Source: Mark E. Glickman, "Example of the Glicko-2 system" (Boston University, revised
2022).  Per rating period, with every quantity on the Glicko-2 scale
(μ = (r - 1500) / 173.7178, φ = RD / 173.7178) and every game using the players'
*pre-period* values::

    g(φ) = 1 / sqrt(1 + 3 φ² / π²)
    E    = 1 / (1 + exp(-g(φ_j) (μ - μ_j)))
    v    = [Σ_j g(φ_j)² E (1 - E)]⁻¹
    Δ    = v Σ_j g(φ_j) (s_j - E)
    σ'   : root of f(x) = eˣ(Δ² - φ² - v - eˣ) / (2 (φ² + v + eˣ)²) - (x - ln σ²) / τ²
           by the Illinois (regula falsi) iteration of step 5, tolerance ε = 1e-6,
           bracket B = ln(Δ² - φ² - v) if Δ² > φ² + v, else B = a - kτ for the
           smallest k ≥ 1 with f(a - kτ) ≥ 0;  σ' = e^(A/2)
    φ*   = sqrt(φ² + σ'²),  φ' = 1 / sqrt(1/φ*² + 1/v),  μ' = μ + φ'² Σ_j g(φ_j)(s_j - E)

A player without games in the period keeps rating and volatility and gets
φ' = sqrt(φ² + σ²) (the RD grows).  Every RD is capped at 350 (an unrated player's RD).

Each game ``(player, opponent, score)`` updates *both* players: ``player`` scored
``score`` (1 win, 0.5 draw, 0 loss) and ``opponent`` scored ``1 - score``.  Glickman's
example (1500/200/0.06 beats 1400/30, loses to 1550/100 and to 1700/300, τ = 0.5) gives
the first player 1464.06 / 151.52 / 0.05999; the opponents are updated too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

SCALE = 173.7178
DEFAULT_RATING = 1500.0
DEFAULT_RD = 350.0
DEFAULT_VOLATILITY = 0.06
MAX_RD = 350.0
EPSILON = 1e-6
DEFAULT_TAU = 0.5

Game = tuple[Any, Any, float]
Rating = tuple[float, float, float]


def _g(phi: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _new_volatility(
    sigma: np.ndarray, phi: np.ndarray, v: np.ndarray, delta: np.ndarray, tau: float
) -> np.ndarray:
    """Step 5 of the paper for many players at once (Illinois iteration, ε = 1e-6)."""
    a = np.log(sigma * sigma)
    phi2 = phi * phi
    delta2 = delta * delta
    tau2 = tau * tau

    def f(x: np.ndarray, i: np.ndarray | slice) -> np.ndarray:
        ex = np.exp(x)
        p = phi2[i] + v[i] + ex
        return ex * (delta2[i] - phi2[i] - v[i] - ex) / (2.0 * p * p) - (x - a[i]) / tau2

    big = delta2 > phi2 + v
    with np.errstate(invalid="ignore", divide="ignore"):
        upper = np.where(big, np.log(np.where(big, delta2 - phi2 - v, 1.0)), 0.0)
    k = np.ones_like(a)
    todo = np.flatnonzero(~big)
    while todo.size:  # Δ² ≤ φ² + v: step down until f(a - kτ) ≥ 0
        still = f(a[todo] - k[todo] * tau, todo) < 0
        todo = todo[still]
        k[todo] += 1.0
    lo = a.copy()  # "A" of the paper
    hi = np.where(big, upper, a - k * tau)  # "B"
    f_lo = f(lo, slice(None))
    f_hi = f(hi, slice(None))
    todo = np.flatnonzero(np.abs(hi - lo) > EPSILON)
    while todo.size:
        A, B, fA, fB = lo[todo], hi[todo], f_lo[todo], f_hi[todo]
        C = A + (A - B) * fA / (fB - fA)
        fC = f(C, todo)
        swap = fC * fB <= 0
        lo[todo] = np.where(swap, B, A)
        f_lo[todo] = np.where(swap, fB, fA / 2.0)
        hi[todo] = C
        f_hi[todo] = fC
        todo = todo[np.abs(C - lo[todo]) > EPSILON]
    return np.exp(lo / 2.0)


def rate_period_arrays(
    rating: np.ndarray,
    rd: np.ndarray,
    volatility: np.ndarray,
    player: np.ndarray,
    opponent: np.ndarray,
    score: np.ndarray,
    *,
    tau: float = DEFAULT_TAU,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One rating period on arrays: players are indices into ``rating``/``rd``/``volatility``.

    ``player[i]`` met ``opponent[i]`` and scored ``score[i]``; both sides are updated.
    Returns new ``(rating, rd, volatility)`` arrays.
    """
    r = np.asarray(rating, dtype=np.float64)
    n = r.size
    mu = (r - DEFAULT_RATING) / SCALE
    phi = np.asarray(rd, dtype=np.float64) / SCALE
    sigma = np.asarray(volatility, dtype=np.float64)
    p = np.asarray(player, dtype=np.int64)
    o = np.asarray(opponent, dtype=np.int64)
    s = np.asarray(score, dtype=np.float64)
    if not (p.shape == o.shape == s.shape) or p.ndim != 1:
        raise ValueError("player, opponent and score must be 1-d arrays of one length")
    if p.size:
        if min(p.min(), o.min()) < 0 or max(p.max(), o.max()) >= n:
            raise ValueError(f"player indices must lie in 0..{n - 1}")
        if np.any(p == o):
            raise ValueError("a player cannot play against itself")
        if not (np.all(s >= 0.0) and np.all(s <= 1.0)):
            raise ValueError("scores must lie between 0 and 1")
    if np.any(phi <= 0) or np.any(sigma <= 0):
        raise ValueError("RD and volatility must be positive")

    # Each game seen from both sides, all with pre-period values.
    g_o, g_p = _g(phi[o]), _g(phi[p])
    diff = mu[p] - mu[o]
    e_p = 1.0 / (1.0 + np.exp(-g_o * diff))  # player's expected score
    e_o = 1.0 / (1.0 + np.exp(g_p * diff))  # opponent's expected score
    info = np.bincount(p, g_o * g_o * e_p * (1.0 - e_p), n)
    info += np.bincount(o, g_p * g_p * e_o * (1.0 - e_o), n)
    gain = np.bincount(p, g_o * (s - e_p), n) + np.bincount(o, g_p * ((1.0 - s) - e_o), n)
    played = (np.bincount(p, minlength=n) + np.bincount(o, minlength=n)) > 0

    new_mu = mu.copy()
    new_sigma = sigma.copy()
    new_phi = np.sqrt(phi * phi + sigma * sigma)  # idle players: RD grows
    idx = np.flatnonzero(played)
    if idx.size:
        v = 1.0 / info[idx]
        delta = v * gain[idx]
        sig = _new_volatility(sigma[idx], phi[idx], v, delta, tau)
        phi_star = np.sqrt(phi[idx] ** 2 + sig * sig)
        phi_new = 1.0 / np.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
        new_mu[idx] = mu[idx] + phi_new * phi_new * gain[idx]
        new_phi[idx] = phi_new
        new_sigma[idx] = sig
    new_rd = np.minimum(new_phi * SCALE, MAX_RD)
    return new_mu * SCALE + DEFAULT_RATING, new_rd, new_sigma


def _as_rating(value: Any) -> Rating:
    if isinstance(value, tuple | list):
        rating, rd, volatility = value
    else:
        rating, rd, volatility = value.rating, value.rd, value.volatility
    return float(rating), float(rd), float(volatility)


def rate_period(
    players: Mapping[Any, Any], games: Sequence[Game], *, tau: float = DEFAULT_TAU
) -> dict[Any, Rating]:
    """Rate one period: return ``{name: (rating, rd, volatility)}`` for every player.

    ``players`` maps a name to ``(rating, rd, volatility)`` or to an object with those
    attributes.  ``games`` lists ``(player, opponent, score)`` with ``score`` 1, 0.5 or 0
    from ``player``'s side; each game updates both players (the opponent scores
    ``1 - score``), all from pre-period values.  A name that appears only in ``games``
    starts unrated (1500 / 350 / 0.06).  Players without games get their RD grown.
    """
    index = {name: i for i, name in enumerate(players)}
    start = [_as_rating(value) for value in players.values()]
    first, second = itemgetter(0), itemgetter(1)
    n_games = len(games)
    try:
        p = np.fromiter(map(index.__getitem__, map(first, games)), np.int64, n_games)
        o = np.fromiter(map(index.__getitem__, map(second, games)), np.int64, n_games)
    except KeyError:
        names = {first(game) for game in games} | {second(game) for game in games}
        for name in names - index.keys():
            index[name] = len(index)
            start.append((DEFAULT_RATING, DEFAULT_RD, DEFAULT_VOLATILITY))
        p = np.fromiter(map(index.__getitem__, map(first, games)), np.int64, n_games)
        o = np.fromiter(map(index.__getitem__, map(second, games)), np.int64, n_games)
    s = np.fromiter(map(itemgetter(2), games), np.float64, n_games)
    table = np.array(start, dtype=np.float64).reshape(-1, 3)
    rating, rd, vol = rate_period_arrays(table[:, 0], table[:, 1], table[:, 2], p, o, s, tau=tau)
    return dict(
        zip(index, zip(rating.tolist(), rd.tolist(), vol.tolist(), strict=True), strict=True)
    )


def rate_periods(
    players: Mapping[Any, Any], periods: Iterable[Sequence[Game]], *, tau: float = DEFAULT_TAU
) -> list[dict[Any, Rating]]:
    """Rate consecutive periods; return the ratings after each (the last is the current)."""
    history: list[dict[Any, Rating]] = []
    current: Mapping[Any, Any] = players
    for games in periods:
        current = rate_period(current, games, tau=tau)
        history.append(current)
    return history

"""Glicko-2 against Glickman's worked example and a plain scalar transcription of the paper."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from leaderboard.ratings.glicko2 import (
    SCALE,
    rate_period,
    rate_period_arrays,
    rate_periods,
)

PAPER_PLAYERS = {
    "player": (1500.0, 200.0, 0.06),
    "o1": (1400.0, 30.0, 0.06),
    "o2": (1550.0, 100.0, 0.06),
    "o3": (1700.0, 300.0, 0.06),
}
PAPER_GAMES = [("player", "o1", 1.0), ("player", "o2", 0.0), ("player", "o3", 0.0)]


def _scalar_update(
    me: tuple[float, float, float], results: list[tuple[float, float, float]], tau: float
) -> tuple[float, float, float]:
    """Steps 2-8 of "Example of the Glicko-2 system" for one player, written out plainly.

    ``results`` lists (opponent rating, opponent RD, my score).
    """
    mu, phi, sigma = (me[0] - 1500) / SCALE, me[1] / SCALE, me[2]
    if not results:
        return me[0], min(math.sqrt(phi**2 + sigma**2) * SCALE, 350.0), sigma
    inv_v = 0.0
    total = 0.0
    for r_j, rd_j, s in results:
        mu_j, phi_j = (r_j - 1500) / SCALE, rd_j / SCALE
        g = 1 / math.sqrt(1 + 3 * phi_j**2 / math.pi**2)
        e = 1 / (1 + math.exp(-g * (mu - mu_j)))
        inv_v += g * g * e * (1 - e)
        total += g * (s - e)
    v = 1 / inv_v
    delta = v * total
    a = math.log(sigma**2)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta**2 - phi**2 - v - ex) / (2 * (phi**2 + v + ex) ** 2) - (x - a) / tau**2

    big_a = a
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > 1e-6:
        c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2
        big_b, f_b = c, f_c
    sigma_new = math.exp(big_a / 2)
    phi_star = math.sqrt(phi**2 + sigma_new**2)
    phi_new = 1 / math.sqrt(1 / phi_star**2 + 1 / v)
    mu_new = mu + phi_new**2 * total
    return mu_new * SCALE + 1500, min(phi_new * SCALE, 350.0), sigma_new


def test_paper_example() -> None:
    rating, rd, vol = rate_period(PAPER_PLAYERS, PAPER_GAMES, tau=0.5)["player"]
    # The paper prints μ' = -0.2069, φ' = 0.8722, σ' = 0.05999 and converts the rounded μ'
    # to 1464.06; unrounded arithmetic gives 1464.0507, within 0.01 of the paper's figure.
    assert round((rating - 1500) / SCALE, 4) == -0.2069
    assert round(rd / SCALE, 4) == 0.8722
    assert rating == pytest.approx(1464.06, abs=0.01)
    assert round(rd, 2) == 151.52
    # σ' = 0.0599960: the paper prints it cut to five decimals.
    assert math.floor(vol * 1e5) == 5999
    assert vol == pytest.approx(0.05999, abs=1e-5)


def test_paper_example_intermediate_quantities_via_scalar_reference() -> None:
    ref = _scalar_update((1500, 200, 0.06), [(1400, 30, 1), (1550, 100, 0), (1700, 300, 0)], 0.5)
    got = rate_period(PAPER_PLAYERS, PAPER_GAMES)["player"]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)


def test_shift_by_400_moves_only_the_rating() -> None:
    shifted = {name: (r + 400, rd, vol) for name, (r, rd, vol) in PAPER_PLAYERS.items()}
    base = rate_period(PAPER_PLAYERS, PAPER_GAMES)
    moved = rate_period(shifted, PAPER_GAMES)
    for name in PAPER_PLAYERS:
        assert moved[name][0] == pytest.approx(base[name][0] + 400, abs=1e-9)
        assert moved[name][1] == pytest.approx(base[name][1], abs=1e-9)
        assert moved[name][2] == pytest.approx(base[name][2], abs=1e-12)
    assert moved["player"][0] == pytest.approx(1864.06, abs=0.01)


def test_idle_period_grows_rd() -> None:
    rating, rd, vol = rate_period({"idle": (1500.0, 200.0, 0.06)}, [])["idle"]
    assert (rating, vol) == (1500.0, 0.06)
    assert round(rd, 2) == 200.27
    assert rd == pytest.approx(math.sqrt((200 / SCALE) ** 2 + 0.06**2) * SCALE)


def test_idle_players_keep_rating_while_others_play() -> None:
    players = dict(PAPER_PLAYERS, idle=(1600.0, 80.0, 0.05))
    result = rate_period(players, PAPER_GAMES)
    assert result["idle"][0] == 1600.0
    assert result["idle"][1] == pytest.approx(math.sqrt((80 / SCALE) ** 2 + 0.05**2) * SCALE)
    assert set(result) == set(players)


def test_rd_is_capped_at_350() -> None:
    result = rate_period({"old": (1500.0, 350.0, 0.06), "near": (1500.0, 349.99, 0.06)}, [])
    assert result["old"][1] == 350.0
    assert result["near"][1] == 350.0
    rd_after_many_idle = rate_periods({"x": (1500.0, 50.0, 0.06)}, [[]] * 2000)[-1]["x"][1]
    assert rd_after_many_idle == 350.0


def test_unknown_players_start_unrated() -> None:
    result = rate_period({}, [("new", "other", 1.0)])
    assert result["new"][0] > 1500 > result["other"][0]
    assert result["new"][1] < 350 and result["other"][1] < 350
    expected = _scalar_update((1500, 350, 0.06), [(1500, 350, 1.0)], 0.5)
    np.testing.assert_allclose(result["new"], expected, atol=1e-9)


def test_both_sides_are_updated_symmetrically() -> None:
    one_way = rate_period(PAPER_PLAYERS, [("player", "o1", 1.0)])
    other_way = rate_period(PAPER_PLAYERS, [("o1", "player", 0.0)])
    for name in PAPER_PLAYERS:
        np.testing.assert_allclose(one_way[name], other_way[name], atol=1e-12)
    expected_o1 = _scalar_update((1400, 30, 0.06), [(1500, 200, 0.0)], 0.5)
    np.testing.assert_allclose(one_way["o1"], expected_o1, atol=1e-9)


def test_accepts_objects_with_attributes() -> None:
    players = {
        name: SimpleNamespace(rating=r, rd=rd, volatility=vol)
        for name, (r, rd, vol) in PAPER_PLAYERS.items()
    }
    assert rate_period(players, PAPER_GAMES) == rate_period(PAPER_PLAYERS, PAPER_GAMES)


def test_vectorised_matches_scalar_reference_on_random_periods() -> None:
    rng = np.random.default_rng(3)
    n, m = 12, 60
    rating = rng.normal(1500, 200, n)
    rd = rng.uniform(30, 350, n)
    vol = rng.uniform(0.03, 0.09, n)
    p = rng.integers(0, n, m)
    o = (p + rng.integers(1, n, m)) % n
    s = rng.choice([0.0, 0.5, 1.0], m)
    for tau in (0.3, 0.5, 1.2):
        got = np.column_stack(rate_period_arrays(rating, rd, vol, p, o, s, tau=tau))
        for i in range(n):
            results = [(rating[o[k]], rd[o[k]], s[k]) for k in range(m) if p[k] == i]
            results += [(rating[p[k]], rd[p[k]], 1 - s[k]) for k in range(m) if o[k] == i]
            expected = _scalar_update((rating[i], rd[i], vol[i]), results, tau)
            np.testing.assert_allclose(got[i], expected, rtol=0, atol=1e-8)


def test_volatility_rises_after_a_big_upset() -> None:
    # Δ² > φ² + v: the bracket starts at B = ln(Δ² - φ² - v) (the other branch of step 5).
    players = {"steady": (1200.0, 40.0, 0.06)} | {f"s{i}": (1900.0, 40.0, 0.06) for i in range(20)}
    games = [("steady", f"s{i}", 1.0) for i in range(20)]
    rating, rd, vol = rate_period(players, games)["steady"]
    expected = _scalar_update((1200, 40, 0.06), [(1900, 40, 1.0)] * 20, 0.5)
    np.testing.assert_allclose((rating, rd, vol), expected, atol=1e-8)
    assert vol > 0.06
    assert rating > 1200


def test_rate_periods_returns_history() -> None:
    history = rate_periods(PAPER_PLAYERS, [PAPER_GAMES, []])
    assert len(history) == 2
    assert history[0]["player"][0] == pytest.approx(1464.05, abs=0.01)
    assert history[1]["player"][0] == history[0]["player"][0]
    assert history[1]["player"][1] > history[0]["player"][1]


def test_rejects_bad_games() -> None:
    with pytest.raises(ValueError, match="itself"):
        rate_period(PAPER_PLAYERS, [("player", "player", 1.0)])
    with pytest.raises(ValueError, match="between 0 and 1"):
        rate_period(PAPER_PLAYERS, [("player", "o1", 2.0)])

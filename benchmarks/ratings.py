"""Timings of the rating engines against their targets; run ``python benchmarks/ratings.py``.

Prints one table: best and median wall time over ``--repeat`` runs, the process CPU time of
the best run (less sensitive to a busy machine than wall time) and the target.  Nothing here
fails the run: a figure over its target is marked ``SLOW``.

Figures that need the database (a full rating run from PostgreSQL, the leaderboard page)
are measured by ``benchmarks/leaderboard_db.py``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from leaderboard.ratings.bradley_terry import (  # noqa: E402
    bootstrap_bradley_terry,
    fit_bradley_terry,
    sandwich_bradley_terry,
)
from leaderboard.ratings.elo import elo_ratings  # noqa: E402
from leaderboard.ratings.glicko2 import rate_period, rate_period_arrays  # noqa: E402
from leaderboard.ratings.style_control import (  # noqa: E402
    fit_style_controlled,
    style_features,
)
from leaderboard.ratings.synthetic import simulate_grouped_votes  # noqa: E402
from leaderboard.ratings.votes_file import group_outcomes, read_votes  # noqa: E402

DATA_FILE = "arena_human_preference_140k.csv.gz"
CATEGORIES = ("creative_writing", "hard_prompt", "instruction_following", "math")

class Bench(NamedTuple):
    name: str
    target: float | None  # seconds
    run: Callable[[], object]


class Timing(NamedTuple):
    best: float
    median: float
    cpu: float


def emit(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def shared_data_dir() -> Path:
    env = os.environ.get("ARENA_SHARED_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data"


def measure(fn: Callable[[], object], repeat: int) -> Timing:
    walls: list[tuple[float, float]] = []
    for _ in range(repeat):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        fn()
        walls.append((time.perf_counter() - wall0, time.process_time() - cpu0))
    best = min(walls)
    return Timing(best[0], statistics.median(w for w, _ in walls), best[1])


def real_data_benches() -> list[Bench]:
    path = shared_data_dir() / DATA_FILE
    if not path.is_file():
        emit(f"(skipping the real-data figures: {path} is absent)")
        return []
    votes = read_votes(path, skip_self_matches=True)
    grouped = group_outcomes(votes.a_idx, votes.b_idx, votes.outcome)
    n = len(votes.models)
    size = f"{len(votes.a_idx):,} real votes, {n} models"
    return [
        Bench(f"read votes file ({size})", 1.0, lambda: read_votes(path, skip_self_matches=True)),
        Bench(
            "group votes by (pair, outcome)",
            None,
            lambda: group_outcomes(votes.a_idx, votes.b_idx, votes.outcome),
        ),
        Bench(f"BT fit ({size})", 0.2, lambda: fit_bradley_terry(*grouped, n)),
        Bench(
            "BT fit + 100 bootstrap rounds (real)",
            1.0,
            lambda: bootstrap_bradley_terry(*grouped, n, n_rounds=100),
        ),
        Bench("BT fit + sandwich CI (real)", None, lambda: sandwich_bradley_terry(*grouped, n)),
        Bench(
            "online Elo replay (real, vote order)",
            None,
            lambda: elo_ratings(votes.a_idx, votes.b_idx, votes.outcome, n),
        ),
        Bench(
            f"read + BT sandwich fit of each category ({', '.join(CATEGORIES)})",
            None,
            lambda: [_category_fit(path, name) for name in CATEGORIES],
        ),
    ]


def _category_fit(path: Path, category: str):
    subset = read_votes(path, skip_self_matches=True, category=category)
    grouped = group_outcomes(subset.a_idx, subset.b_idx, subset.outcome)
    return sandwich_bradley_terry(*grouped, len(subset.models))


def _styled_votes(n_votes: int, n_models: int):
    """Votes with a length bias: (a, b, outcome, standardised style features)."""
    rng = np.random.default_rng(7)
    truth = rng.normal(0.0, 0.6, n_models)
    a = rng.integers(0, n_models, n_votes)
    b = (a + rng.integers(1, n_models, n_votes)) % n_models
    counts_a = np.column_stack([rng.poisson(400, n_votes), rng.poisson(2, (n_votes, 3))])
    counts_b = np.column_stack([rng.poisson(400, n_votes), rng.poisson(2, (n_votes, 3))])
    x = style_features(counts_a, counts_b)
    p = 1 / (1 + np.exp(-(truth[a] - truth[b] + 0.3 * x[:, 0])))
    return a, b, np.where(rng.random(n_votes) < p, 0, 1), counts_a, counts_b


def synthetic_benches() -> list[Bench]:
    rng = np.random.default_rng(2024)
    truth = rng.normal(1000.0, 120.0, 200)
    n_votes = 10_000_000
    grouped = simulate_grouped_votes(truth, n_votes, rng=np.random.default_rng(1))
    size = f"{n_votes // 1_000_000}M synthetic votes, 200 models, {grouped[0].size:,} rows"

    n_players, n_games = 200, 1_000_000
    names = [f"model-{i}" for i in range(n_players)]
    players = {
        name: (1500.0 + 150.0 * rng.standard_normal(), 60.0 + 200.0 * rng.random(), 0.06)
        for name in names
    }
    p = rng.integers(0, n_players, n_games)
    o = (p + rng.integers(1, n_players, n_games)) % n_players
    s = rng.choice([0.0, 0.5, 1.0], n_games)
    games = list(zip([names[i] for i in p], [names[i] for i in o], s.tolist(), strict=True))
    table = np.array(list(players.values()))
    sa, sb, so, counts_a, counts_b = _styled_votes(1_000_000, 200)
    return [
        Bench(
            "style control: features + fit with sandwich CI (1M synthetic votes, 200 models)",
            1.0,
            lambda: fit_style_controlled(sa, sb, so, style_features(counts_a, counts_b), 200),
        ),
        Bench(
            f"generate {n_votes // 1_000_000}M votes, grouped",
            None,
            lambda: simulate_grouped_votes(truth, n_votes, rng=np.random.default_rng(1)),
        ),
        Bench(f"BT fit ({size})", None, lambda: fit_bradley_terry(*grouped, 200)),
        Bench(
            "BT fit + 100 bootstrap rounds (10M synthetic)",
            10.0,
            lambda: bootstrap_bradley_terry(*grouped, 200, n_rounds=100),
        ),
        Bench(
            "BT fit + sandwich CI (10M synthetic)",
            None,
            lambda: sandwich_bradley_terry(*grouped, 200),
        ),
        Bench(
            f"Glicko-2 period: {n_players} players, {n_games:,} games (rate_period)",
            1.0,
            lambda: rate_period(players, games),
        ),
        Bench(
            "Glicko-2 period, same games as arrays",
            None,
            lambda: rate_period_arrays(table[:, 0], table[:, 1], table[:, 2], p, o, s),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (default 3)")
    args = parser.parse_args()

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    emit(
        f"Python {platform.python_version()}, NumPy {np.__version__}, SciPy {scipy.__version__}, "
        f"{os.cpu_count()} CPUs, load average {load}"
    )
    benches = real_data_benches() + synthetic_benches()
    rows = []
    for bench in benches:
        timing = measure(bench.run, args.repeat)
        rows.append((bench.name, bench.target, timing))

    width = max(len(name) for name, _, _ in rows)
    header = f"{'figure':<{width}}  {'target':>8}  {'best':>8}  {'median':>8}  {'cpu':>8}  status"
    emit()
    emit(header)
    emit("-" * len(header))
    for name, target, timing in rows:
        goal = f"{target:.2f}s" if target is not None else "-"
        status = "" if target is None else ("OK" if timing.best <= target else "SLOW")
        emit(
            f"{name:<{width}}  {goal:>8}  {timing.best:>7.3f}s  {timing.median:>7.3f}s"
            f"  {timing.cpu:>7.3f}s  {status}"
        )
    emit(f"\nload average after the run: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

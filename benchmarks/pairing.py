# ruff: noqa: T201 - a benchmark prints its figures
"""How fast each pairing strategy learns a board; prints figures, asserts nothing.

    .venv/bin/python benchmarks/pairing.py [--models 20] [--runs 30] [--batch 100]

Simulates battles between ``--models`` models with known strengths (Elo scale, spread
sd 150, ties 15 %, both-bad 10 %). Votes arrive in batches of ``--batch``; each batch's
pairs are drawn by the strategy from the estimates of the fit after the previous batch
(Bradley–Terry, sandwich intervals: what the arena's board shows). For uniform,
fewer-votes and informative pairing it prints the votes needed (median over ``--runs``
seeds) until

* the top-5 order is stable: the estimated top five, in order, equal the true top five
  from that batch on, to the end of the run;
* every 95 % interval is within ±20 points.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from leaderboard.ratings.bradley_terry import sandwich_bradley_terry  # noqa: E402
from leaderboard.ratings.outcomes import A_WINS, B_WINS, BOTH_BAD, TIE  # noqa: E402
from leaderboard.ratings.pairing import (  # noqa: E402
    fewer_votes_pairs,
    informative_pairs,
    uniform_pairs,
)
from leaderboard.ratings.provisional import PRIOR_MEAN, PRIOR_SD  # noqa: E402

STRATEGIES = ("uniform", "fewer_votes", "informative")
Z95 = 1.959963984540054


def _probs(strategy: str, n: int, rating, se, votes) -> np.ndarray:
    if strategy == "uniform":
        return uniform_pairs(n)
    if strategy == "fewer_votes":
        return fewer_votes_pairs(votes)
    return informative_pairs(rating, se)


def simulate(strategy: str, true: np.ndarray, *, batch: int, max_votes: int, seed: int):
    """(votes until the top five are stable, votes until every interval is within ±20)."""
    rng = np.random.default_rng(seed)
    n = true.size
    counts = np.zeros((n, n, 4), dtype=np.int64)  # a, b, outcome code
    rating, se = np.full(n, PRIOR_MEAN), np.full(n, PRIOR_SD)
    votes = np.zeros(n)
    top_true = list(np.argsort(-true)[:5])
    history, narrow_at, total = [], None, 0
    iu, ju = np.triu_indices(n, 1)
    while total < max_votes:
        probs = _probs(strategy, n, rating, se, votes)[iu, ju]
        picks = rng.choice(iu.size, size=batch, p=probs / probs.sum())
        a, b = iu[picks], ju[picks]
        p_a = 1 / (1 + 10 ** ((true[b] - true[a]) / 400))
        u = rng.random(batch)
        code = np.where(u < 0.15, TIE, np.where(u < 0.25, BOTH_BAD,
                        np.where(rng.random(batch) < p_a, A_WINS, B_WINS)))
        np.add.at(counts, (a, b, code), 1)
        np.add.at(votes, a, 1)
        np.add.at(votes, b, 1)
        total += batch
        ga, gb, gc = np.nonzero(counts)
        fit = sandwich_bradley_terry(ga, gb, gc, counts[ga, gb, gc], n)
        rating = fit.ratings
        se = np.maximum((fit.ci_upper - fit.ci_lower) / (2 * Z95), 1e-6)
        history.append((total, list(np.argsort(-rating)[:5]) == top_true))
        if narrow_at is None and np.all(fit.ci_upper - fit.ratings <= 20) and np.all(
                fit.ratings - fit.ci_lower <= 20):
            narrow_at = total
    stable_at = None
    for at, right in reversed(history):
        if not right:
            break
        stable_at = at
    return stable_at, narrow_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--max-votes", type=int, default=60_000)
    args = parser.parse_args()
    print(f"{args.models} models (true Elo spread sd 150), batches of {args.batch} votes, "
          f"at most {args.max_votes:,} votes, median of {args.runs} runs")
    print(f"{'strategy':<12} {'top-5 stable after':>20} {'all within ±20 after':>22}")
    for strategy in STRATEGIES:
        stable, narrow = [], []
        for run in range(args.runs):
            true = 1000 + np.random.default_rng(1000 + run).normal(0, 150, args.models)
            s, w = simulate(strategy, true, batch=args.batch, max_votes=args.max_votes,
                            seed=run)
            stable.append(s if s is not None else float("inf"))
            narrow.append(w if w is not None else float("inf"))

        def show(values):
            m = statistics.median(values)
            return "not reached" if m == float("inf") else f"{m:,.0f} votes"

        print(f"{strategy:<12} {show(stable):>20} {show(narrow):>22}")


if __name__ == "__main__":
    main()

"""How often the vote-integrity tests flag honest voters, and how soon they catch cheaters,
on LMArena's 135,634 real votes (../shared/data); run ``python benchmarks/vote_integrity.py``.

Honest visitors replay real votes (a random slice each; the screen side of each battle is
drawn at random, as the arena shuffles it). Cheaters are built from the same pool: a side
clicker always picks the left answer; a stuffer always votes for one model whenever it is in
the battle (and votes like everyone else otherwise). Prints the false-flag rate over honest
visitors and the share of cheaters caught after n votes, at the default thresholds.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import random
import sys
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.contests.integrity import CastVote, Thresholds, findings, model_win_rates  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "arena_human_preference_140k.csv.gz"
START = datetime(2026, 11, 1)


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def load(path: Path) -> list[tuple[str, str, str]]:
    with gzip.open(path, "rt", newline="") as handle:
        return [(row["model_a"], row["model_b"], row["winner"]) for row in csv.DictReader(handle)]


def as_cast(row: tuple[str, str, str], rng: random.Random, at: datetime) -> CastVote:
    a, b, winner = row
    if winner == "model_a":
        winner_model, loser_model = a, b
    elif winner == "model_b":
        winner_model, loser_model = b, a
    else:
        return CastVote(None, None, None, at)
    a_left = rng.random() < 0.5
    side = "left" if (winner == "model_a") == a_left else "right"
    return CastVote(side, winner_model, loser_model, at)


def visitor(rows, rng, n, *, gap=45.0, cheat=None, target="", target_rows=()) -> list[CastVote]:
    """``n`` votes from ``rows``; a ``stuffer`` votes in ``target_rows`` (battles of
    ``target``) always for ``target``, a ``clicker`` always for the left side."""
    votes = []
    for i in range(n):
        at = START + timedelta(seconds=gap * i)
        row = rng.choice(rows)
        if cheat == "stuffer":
            a, b, _ = rng.choice(target_rows)
            row = (a, b, "model_a" if a == target else "model_b")
        cast = as_cast(row, rng, at)
        if cheat == "clicker" and cast.side is not None:
            cast = CastVote("left", cast.winner, cast.loser, at)
        votes.append(cast)
    return votes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--honest", type=int, default=2000, help="honest visitors")
    parser.add_argument("--cheaters", type=int, default=300, help="cheaters of each kind")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = load(DATA)
    limits = Thresholds()
    everyone = [as_cast(r, rng, START) for r in rows]
    rates = model_win_rates(everyone)
    say(f"{len(rows):,} real votes, {len(rates)} models; thresholds: alpha {limits.alpha:g}, "
          f"at least {limits.min_votes} votes, burst over {limits.burst_votes} votes in "
          f"{int(limits.burst_window.total_seconds())} s")

    sizes = [rng.choice([20, 30, 50, 100, 200, 400]) for _ in range(args.honest)]
    flagged = sum(bool(findings(visitor(rows, rng, n), rates, limits)) for n in sizes)
    say(f"honest visitors: {flagged} of {args.honest} flagged "
          f"({flagged / args.honest:.2%}); {sum(sizes):,} votes replayed")

    weak = sorted(rates, key=rates.get)[: len(rates) // 2]
    battles_of = defaultdict(list)
    for row in rows:
        battles_of[row[0]].append(row)
        battles_of[row[1]].append(row)
    for n in (10, 20, 30, 50):
        clickers = sum(bool(findings(visitor(rows, rng, n, cheat="clicker"), rates, limits))
                       for _ in range(args.cheaters))
        caught = 0
        for _ in range(args.cheaters):
            model = rng.choice(weak)  # boosting a weak model is what a stuffer wants
            cheat = visitor(rows, rng, n, cheat="stuffer", target=model,
                            target_rows=battles_of[model])
            caught += bool(findings(cheat, rates, limits))
        say(f"after {n:>2} votes: side clickers caught {clickers / args.cheaters:6.1%}, "
              f"stuffers of a weaker-half model caught {caught / args.cheaters:6.1%}")
    burst = visitor(rows, rng, 40, gap=2.0)
    say(f"40 votes 2 s apart: {[f.reason for f in findings(burst, rates, limits)]}")


if __name__ == "__main__":
    main()

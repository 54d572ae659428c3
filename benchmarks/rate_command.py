# ruff: noqa: T201 - a benchmark prints its figures
"""``manage.py rate`` as a whole process against LMArena's ``arena-rank`` on the same file.

    .venv/bin/python benchmarks/rate_command.py [--repeat 5] [--arena-rank-python PATH]

Both rate the shared 135,634 real votes with Bradley–Terry and sandwich (robust) 95 %
intervals, each as a fresh process, from reading the file to printing the ratings; the best
and median wall time over ``--repeat`` runs are printed, with their ratio (target: the
arena's command under 0.3 × arena-rank's). The two take turns, run by run, so that a busy
moment on a shared machine slows both rather than one. ``arena-rank`` (JAX) is not a
dependency of the arena: give the interpreter of an environment that has it, e.g.
``python3 -m venv /tmp/ar && /tmp/ar/bin/pip install arena-rank pandas``; without one only
the arena's figure is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ARENA_SHARED_DATA", ROOT.parent / "shared" / "data"))
FILE = DATA / "arena_human_preference_140k.csv.gz"

# The arena-rank run, as its README shows it: a pandas frame, a PairDataset, sandwich CIs.
ARENA_RANK = """
import sys
import pandas as pd
from arena_rank.models.bradley_terry import BradleyTerry
from arena_rank.utils.data_utils import PairDataset
df = pd.read_csv(sys.argv[1], usecols=["model_a", "model_b", "winner"])
df = df[df.model_a != df.model_b]
data = PairDataset.from_pandas(df)
model = BradleyTerry(n_competitors=len(data.competitors))
result = model.compute_ratings_and_cis(data, ci_method="sandwich")
for name, rating in sorted(zip(data.competitors, result["ratings"].tolist()),
                           key=lambda x: -x[1]):
    print(name, round(rating, 2))
"""


def timed(commands: list[list[str]], repeat: int) -> list[list[float]]:
    """Each command's wall times over ``repeat`` rounds; every round runs each once."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(repeat):
        for command, taken in zip(commands, times, strict=True):
            started = time.perf_counter()
            subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            taken.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--arena-rank-python", metavar="PATH",
                        help="an interpreter that can import arena_rank and pandas")
    args = parser.parse_args()
    if not FILE.is_file():
        sys.exit(f"{FILE} is absent (set ARENA_SHARED_DATA to the shared data folder)")
    commands = [[sys.executable, "manage.py", "rate", "--ci", "sandwich", "--format", "json",
                 "--input", str(FILE)]]
    if args.arena_rank_python:
        commands.append([args.arena_rank_python, "-c", ARENA_RANK, str(FILE)])
    ours, *rest = timed(commands, args.repeat)
    print(f"votes file: {FILE.name}; Bradley–Terry with sandwich 95 % intervals; "
          f"whole process, {args.repeat} runs each")
    print(f"  manage.py rate   best {min(ours):6.2f} s   median {statistics.median(ours):6.2f} s")
    if not rest:
        print("  arena-rank       not measured (pass --arena-rank-python)")
        return
    theirs = rest[0]
    print(f"  arena-rank       best {min(theirs):6.2f} s   median "
          f"{statistics.median(theirs):6.2f} s")
    ratio = min(ours) / min(theirs)
    print(f"  ratio (best)     {ratio:.2f} x   (target: under 0.30 x) -> "
          f"{'met' if ratio < 0.3 else 'NOT met'}")


if __name__ == "__main__":
    main()

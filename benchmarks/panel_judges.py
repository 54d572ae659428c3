# ruff: noqa: T201 - a benchmark prints its figures
"""How often each local model gives a valid ranking on its first try, over N panels.

    .venv/bin/python benchmarks/panel_judges.py [--panels 20]

Starts the whole arena as the run command does (``python -m arena.devserver``: its own
var folder, SQLite, embedded Redis, the two local CPU models, a Celery worker) on a free
port, runs ``manage.py panel QUESTION --no-clarify --json`` N times with simple questions,
and prints, per judge, how many of its rankings were valid on the first attempt, after the
retry, or discarded, and the median panel time. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "What is 2+2? Answer briefly.", "What is the capital of France?",
    "Name a prime number below 10.", "What colour is the sky on a clear day?",
    "How many legs does a spider have?", "What is the boiling point of water in Celsius?",
    "Who wrote Romeo and Juliet?", "What is 3 times 7?", "Name a planet in our solar system.",
    "What is the largest ocean on Earth?", "How many days are in a week?",
    "What gas do plants absorb from the air?", "What is the square root of 81?",
    "Which animal is known as the king of the jungle?", "What is H2O commonly called?",
    "How many continents are there?", "What is the freezing point of water in Fahrenheit?",
    "Translate 'hello' into Spanish.", "What is 10 divided by 2?",
    "What shape has three sides?",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/models", timeout=2) as r:
                if len(json.load(r)["models"]) >= 2:
                    return
        except OSError:
            pass
        time.sleep(1)
    raise SystemExit("the arena did not come up with two models")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", type=int, default=20)
    args = parser.parse_args()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(ARENA_VAR_DIR=tempfile.mkdtemp(prefix="arena-judges-"), PORT=str(port),
               LOG_LEVEL="WARNING", ARENA_PANELS_PER_MINUTE="0")
    arena = subprocess.Popen([sys.executable, "-m", "arena.devserver"], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    outcomes: dict[str, Counter] = defaultdict(Counter)
    durations = []
    try:
        wait_ready(port, time.monotonic() + 180)
        for i in range(args.panels):
            started = time.monotonic()
            run = subprocess.run(
                [sys.executable, "manage.py", "panel", QUESTIONS[i % len(QUESTIONS)],
                 "--no-clarify", "--json", "--worker", "external"],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
            durations.append(time.monotonic() - started)
            try:
                panel = json.loads(run.stdout)
            except ValueError:
                print(f"panel {i + 1}: no JSON ({run.stderr.strip().splitlines()[-1:]})")
                continue
            for ranking in panel.get("rankings", []):
                judge = ranking["judge"]
                if ranking["valid"]:
                    outcomes[judge]["first try" if ranking["attempts"] == 1 else "retry"] += 1
                else:
                    outcomes[judge]["discarded"] += 1
            print(f"panel {i + 1}/{args.panels}: {panel.get('status')} in "
                  f"{durations[-1]:.1f} s", flush=True)
    finally:
        os.killpg(arena.pid, signal.SIGINT)
        try:
            arena.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(arena.pid, signal.SIGKILL)
    print(f"\n{args.panels} panels on the local models, median {statistics.median(durations):.1f}"
          " s each")
    for judge, counts in sorted(outcomes.items()):
        total = sum(counts.values())
        print(f"  {judge}: valid on the first try {counts['first try']}/{total}, after the "
              f"retry {counts['retry']}/{total}, discarded {counts['discarded']}/{total}")


if __name__ == "__main__":
    main()

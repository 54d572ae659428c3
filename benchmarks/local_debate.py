# ruff: noqa: T201 - a benchmark prints its figures
"""A newcomer's debate on the embedded models, through the arena as the README's run command
starts it; prints the timeline and the speeches, asserts nothing.

    .venv/bin/python benchmarks/local_debate.py [--rounds 2] [--word-limit 120] [--runs 1]

Starts ``python -m arena.devserver`` on a fresh folder and a free port (SQLite, the embedded
Redis, the two local models, the workers), waits until the address is printed and the
models and a worker answer, then starts a debate between the two local models with the form's
defaults through ``POST /api/debate/run`` and follows ``GET /api/debates/{id}``: when each
speech landed, when voting opened (the first speech), the whole debate's time (issue 31's
target: two rounds in under 5 minutes), each speech's words and whether it followed the
format, the fact-check notes and the verdict.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
RUNNING_AT = re.compile(r"The arena is running at (http://127\.0\.0\.1:\d+)/")
TOKEN = "local-debate-benchmark"
LOCAL = ("smollm2-135m", "qwen2.5-coder-0.5b")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def arena(var_dir: Path) -> Iterator[str]:
    """The whole arena as ``python3 dev.py run`` starts it; its URL once models and a worker
    answer."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "REDIS_URL", "CACHE_PREFIX")}
    env.update(ARENA_VAR_DIR=str(var_dir), PORT=str(free_port()), LOG_LEVEL="WARNING",
               ARENA_HEALTH_TOKEN=TOKEN, ARENA_DEBATES_PER_HOUR="0",
               ARENA_DEBATE_REQUESTS_PER_HOUR="0")
    log = var_dir / "run.log"
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "arena.devserver"], cwd=ROOT,
                                   env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        url = ""
        while time.monotonic() - started < 600:
            if process.poll() is not None:
                raise SystemExit(f"the arena stopped:\n{log.read_text()[-3000:]}")
            found = url or (RUNNING_AT.search(log.read_text()) or [None, ""])[1]
            if found and not url:
                url = found
                print(f"address printed after {time.monotonic() - started:.1f} s")
            if url and _ready(url):
                print(f"models and a worker answer after {time.monotonic() - started:.1f} s")
                yield url
                return
            time.sleep(0.5)
        raise SystemExit("the arena was not ready within 10 minutes")
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def _ready(url: str) -> bool:
    try:
        health = httpx.get(f"{url}/healthz", timeout=5,
                           headers={"Authorization": f"Bearer {TOKEN}"}).json()
    except (httpx.HTTPError, ValueError):
        return False
    models = health.get("models", {}).get("models", {})
    return (all(models.get(slug, {}).get("available") for slug in LOCAL)
            and health.get("worker", {}).get("ok"))


def one_debate(url: str, rounds: int, word_limit: int) -> float:
    client = httpx.Client(base_url=url, timeout=30)
    client.get("/debates/")  # a session, as a visitor's browser has
    started = time.monotonic()
    answer = client.post("/api/debate/run", json={
        "model_a": LOCAL[0], "model_b": LOCAL[1], "rounds": rounds,
        "word_limit": word_limit, "fact_checking": True})
    answer.raise_for_status()
    debate_id = answer.json()["debate_id"]
    seen: set[tuple[int, str]] = set()
    status = ""
    while time.monotonic() - started < 1800:
        data = client.get(f"/api/debates/{debate_id}").json()
        for turn in data["transcript"]:
            key = (turn["round"], turn["position"])
            if key not in seen:
                seen.add(key)
                print(f"  {time.monotonic() - started:6.1f} s  round {key[0]} {key[1]:3}: "
                      f"{len(turn['speech'].split())} words"
                      f"{' (format not followed)' if turn.get('tags_missing') else ''}")
        status = data["status"]
        if status in ("completed", "failed", "cancelled"):
            break
        time.sleep(1)
    wall = time.monotonic() - started
    print(f"debate {status} in {wall:.1f} s ({rounds} rounds, {word_limit} words a turn); "
          f"AI verdict: {data.get('ai_winner') or 'none'}"
          f"{'' if data.get('judged', True) else ' (no independent judge)'}")
    for turn in data["transcript"]:
        print(f"\n[{turn['round']} {turn['position']}] {turn['speech']}")
        for check in turn.get("fact_checks", []):
            print(f"    fact-check: {check.get('verdict')}: {check.get('claim')}")
        if turn.get("fact_check_note"):
            print(f"    note: {turn['fact_check_note']}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--word-limit", type=int, default=120)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-local-debate-") as folder, \
            arena(Path(folder)) as url:
        walls = [one_debate(url, args.rounds, args.word_limit) for _ in range(args.runs)]
    print(f"\nwall times: {', '.join(f'{w:.1f} s' for w in walls)}")


if __name__ == "__main__":
    main()

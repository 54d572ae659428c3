# ruff: noqa: T201 - a benchmark prints its figures
"""A mixed load on the real stack for a fixed time; prints figures, then checks the database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python benchmarks/load.py [--seconds 20]

The stack is :mod:`benchmarks.stack`'s (daphne and Celery workers as the run command starts
them, a throwaway database: PostgreSQL and Redis when the variables are set, else SQLite and
the embedded Redis) with a fake OpenAI-compatible provider. Bounded, closed-loop clients on
loopback (each sends its next request when the last one is answered, over a kept-alive
connection) run at once for ``--seconds``:

* leaderboard readers: ``GET /api/leaderboard`` (target: at least 300 a second, p95 at most
  50 ms);
* voters: ``POST /api/battles/{id}/vote`` on answered battles of their own session, each
  battle once, each voter from its own address, every vote counting for the ratings (the
  online Elo moves, the battle is classified); target: at least 100 a second, none lost or
  duplicated;
* battle writers: ``POST /api/battles`` then ``POST /api/battles/{id}/messages``, each prompt
  carrying a unique token;
* debate readers: ``GET /api/debates``.

It prints requests per second, p50/p95/p99 and the errors of each endpoint, then verifies in
the database that every vote answered 200 is stored exactly once (and no other), counted
and classified, and that every answer holds its own prompt's token and its own side's model.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import secrets
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path
                             if Path(p or ".").resolve() != ROOT / "benchmarks"]

from benchmarks.stack import (  # noqa: E402 - after the path is set
    cpu_report,
    cpu_seconds,
    describe,
    host_speed,
    migrated_stack,
    percentile,
    prepare_environment,
    start_web_process,
    start_worker_processes,
)

TOKEN_RE = re.compile(r"tok[0-9a-f]{12}")


class Client:
    """One visitor on one kept-alive connection, with its session cookie."""

    def __init__(self, port: int, session_key: str = "", address: str = "") -> None:
        self.port = port
        self.cookie = f"sessionid={session_key}" if session_key else ""
        self.address = address  # sent as X-Forwarded-For
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def send(self, method: str, path: str, payload: dict | None = None):
        # A write shows the API it comes from the site (arena.api_writes), as a page's would.
        headers = ({"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{self.port}"}
                   if payload is not None else {})
        if self.cookie:
            headers["Cookie"] = self.cookie
        if self.address:
            headers["X-Forwarded-For"] = self.address
        body = json.dumps(payload).encode() if payload is not None else None
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, OSError):
                self.conn.close()  # the server closed a kept-alive connection: open anew
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                if attempt == 2:
                    raise
        for value in response.headers.get_all("Set-Cookie") or []:
            if value.startswith("sessionid="):
                self.cookie = value.split(";", 1)[0]
        return response.status, data


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.statuses: dict[str, Counter] = defaultdict(Counter)

    def timed(self, name: str, client: Client, method: str, path: str,
              payload: dict | None = None):
        started = time.perf_counter()
        try:
            status, data = client.send(method, path, payload)
        except Exception as exc:  # a dropped connection is an error of that endpoint
            status, data = type(exc).__name__, b""
        elapsed = time.perf_counter() - started
        with self.lock:
            self.latency[name].append(elapsed)
            self.statuses[name][status] += 1
        return status, data


def make_provider():
    from testkit.fake_providers import FakeOpenAIServer

    def reply(rec) -> str:
        users = [m for m in rec.messages if m.get("role") == "user"]
        return f"Reply of {rec.model} to: {users[-1]['content'] if users else ''}"

    provider = FakeOpenAIServer(api_key=None, reply_text=reply).start()
    provider.first_token_delay, provider.token_delay = 0.05, 0.01
    return provider


def seed(provider, *, voters: int, battles_each: int) -> dict[str, list[str]]:
    """Models, a rated board, a debate list, and answered battles for each voter's session:
    ``{session_key: [battle ids]}``."""
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command
    from django.db import connection

    from arena.models import AIModel, ProviderKind
    from arena.steps import StepStatus
    from battles.demo import demo_seed
    from battles.models import Battle, Position, Response, Slot, Thread, Turn
    from leaderboard.models import RunTrigger
    from leaderboard.runs.services import ratings_run

    common = {"provider": "Bench", "provider_kind": ProviderKind.OPENAI,
              "base_url": provider.base_url, "api_key_env": "", "max_tokens": 64,
              "in_models_file": True}
    models = [AIModel.objects.create(slug=f"load-{name}", name=f"Load {name.title()}",
                                     api_model=f"{name}-api", **common)
              for name in ("alpha", "beta", "gamma", "delta")]
    demo_seed(battles=2000)
    ratings_run(trigger=RunTrigger.COMMAND)
    call_command("load_debate_library", verbosity=0)
    ballots: dict[str, list[str]] = {}
    for v in range(voters):
        store = SessionStore()
        store.create()
        thread = Thread.objects.create(session_key=store.session_key, title="load")
        rows = [Battle(session_key=store.session_key, thread=thread, model_a=models[i % 4],
                       model_b=models[(i + 1) % 4], model_a_position=Position.LEFT,
                       title="load") for i in range(battles_each)]
        Battle.objects.bulk_create(rows)
        turns = Turn.objects.bulk_create([Turn(battle=b, index=1, prompt=f"vote {v}")
                                          for b in rows])
        Response.objects.bulk_create([
            Response(turn=t, slot=slot, status=StepStatus.DONE, text=f"answer {slot}")
            for t in turns for slot in (Slot.A, Slot.B)])
        ballots[store.session_key] = [str(b.id) for b in rows]
    if connection.vendor == "postgresql":
        # Planner statistics, as autovacuum keeps them on a live database: without them the
        # tables just loaded look empty, and a join scans the whole answer table.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return ballots


def run_load(port: int, seconds: float, ballots: dict[str, list[str]], *, readers: int,
             writers: int, debate_readers: int) -> tuple[Recorder, list[str], list[str], float]:
    recorder, accepted, created = Recorder(), [], []
    deadline = time.monotonic() + seconds
    accepted_lock = threading.Lock()

    def reader() -> None:
        client = Client(port)
        while time.monotonic() < deadline:
            recorder.timed("GET /api/leaderboard", client, "GET", "/api/leaderboard")

    def debates() -> None:
        client = Client(port)
        while time.monotonic() < deadline:
            recorder.timed("GET /api/debates", client, "GET", "/api/debates")

    def voter(number: int, session_key: str, battle_ids: list[str]) -> None:
        client = Client(port, session_key, address=f"10.0.{number // 250}.{number % 250 + 1}")
        for battle_id in battle_ids:
            if time.monotonic() >= deadline:
                return
            choice = secrets.choice(["left_better", "right_better", "tie", "both_bad"])
            status, _ = recorder.timed("POST /api/battles/{id}/vote", client, "POST",
                                       f"/api/battles/{battle_id}/vote", {"vote": choice})
            if status == 200:
                with accepted_lock:
                    accepted.append(battle_id)

    def writer() -> None:
        client = Client(port)
        while time.monotonic() < deadline:
            token = f"tok{secrets.token_hex(6)}"
            status, data = recorder.timed("POST /api/battles", client, "POST", "/api/battles",
                                          {"prompt": f"Echo {token}"})
            if status != 200:
                continue
            battle_id = json.loads(data)["battle_id"]
            created.append(battle_id)
            follow = f"tok{secrets.token_hex(6)}"
            recorder.timed("POST /api/battles/{id}/messages", client, "POST",
                           f"/api/battles/{battle_id}/messages", {"prompt": f"Echo {follow}"})

    threads = [threading.Thread(target=reader) for _ in range(readers)]
    threads += [threading.Thread(target=debates) for _ in range(debate_readers)]
    threads += [threading.Thread(target=voter, args=(number, *item))
                for number, item in enumerate(ballots.items())]
    threads += [threading.Thread(target=writer) for _ in range(writers)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return recorder, accepted, created, time.monotonic() - started


def verify(accepted: list[str], ballots: dict[str, list[str]]) -> list[str]:
    """What the database holds against what the clients were told."""
    from django.db.models import Count

    from battles.models import Response, Vote

    problems = []
    offered = [b for ids in ballots.values() for b in ids]
    stored = Counter(str(b) for b in Vote.objects.filter(battle_id__in=offered)
                     .values_list("battle_id", flat=True))
    lost = set(accepted) - set(stored)
    extra = set(stored) - set(accepted)
    doubled = [b for b, n in stored.items() if n > 1]
    print(f"votes: {len(accepted)} answered 200, {sum(stored.values())} stored; lost "
          f"{len(lost)}, stored without a 200 {len(extra)}, stored twice {len(doubled)}")
    if lost or extra or doubled:
        problems.append("votes lost, unexpected or doubled")
    load_votes = Vote.objects.filter(battle_id__in=offered)
    counted = load_votes.filter(counts_for_rating=True).count()
    pending = load_votes.filter(categories_pending=True).count()
    addresses = load_votes.values("voter").distinct().count()
    print(f"votes counted for ratings: {counted} of {sum(stored.values())}, from {addresses} "
          f"addresses; waiting for their categories: {pending}")
    if counted != sum(stored.values()) or pending:
        problems.append("votes not counted or not classified")
    answers = (Response.objects.filter(turn__prompt__startswith="Echo tok")
               .select_related("turn__battle__model_a", "turn__battle__model_b"))
    mixed = 0
    for answer in answers:
        battle = answer.turn.battle
        model = battle.model_a if answer.slot == "a" else battle.model_b
        token = TOKEN_RE.search(answer.turn.prompt).group(0)
        if answer.text and (token not in answer.text
                            or f"Reply of {model.api_model}" not in answer.text):
            mixed += 1
    per_turn = (Response.objects.filter(turn__prompt__startswith="Echo tok").values("turn")
                .annotate(n=Count("id")).filter(n__gt=2).count())
    print(f"answers: {answers.count()} written for the load's battles; mixed up {mixed}; "
          f"turns with more than two answers {per_turn}")
    if mixed or per_turn:
        problems.append("answers mixed up")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--readers", type=int, default=8, help="leaderboard readers")
    parser.add_argument("--voters", type=int, default=8, help="voting visitors")
    parser.add_argument("--writers", type=int, default=4, help="battle writers")
    parser.add_argument("--debate-readers", type=int, default=2)
    args = parser.parse_args()

    # Many visitors from one address: the per-visitor write limits would answer 429 here.
    os.environ["ARENA_WRITES_PER_MINUTE"] = "0"
    # Each voter comes from its own address (as a proxy in front reports it), and the daily
    # cap is above what one voter casts here: every vote counts, the costlier path (past the
    # cap a vote is stored without moving any rating).
    os.environ["ARENA_TRUSTED_PROXY_HEADER"] = "X-Forwarded-For"
    os.environ["ARENA_COUNTED_VOTES_PER_DAY"] = str(int(args.seconds * 60) + 1)
    os.environ["ARENA_DEBATE_REQUESTS_PER_HOUR"] = "0"
    # Readers and writers far past seed 004's hourly allowance per address and per person.
    os.environ["ARENA_ANON_REQUESTS_PER_HOUR"] = "0"
    os.environ["ARENA_PERSON_REQUESTS_PER_HOUR"] = "0"
    print(f"Host: {host_speed()}")
    info = prepare_environment()
    with contextlib.ExitStack() as stack:
        migrated_stack(stack, info)
        from django.conf import settings

        from arena.celery import app

        provider = make_provider()
        stack.callback(provider.stop)
        ballots = seed(provider, voters=args.voters, battles_each=int(args.seconds * 60))
        port = start_web_process(stack)
        start_worker_processes(stack, app, settings.CELERY_WORKER_CONCURRENCY,
                               settings.CELERY_WORKER_PROCESSES)
        print(f"Stack: daphne on 127.0.0.1:{port}, {settings.CELERY_WORKER_PROCESSES} Celery "
              f"worker process(es), {describe(info)}; clients: {args.readers} leaderboard "
              f"readers, {args.voters} voters, {args.writers} battle writers, "
              f"{args.debate_readers} debate readers, for {args.seconds:g} s")
        before = cpu_seconds()
        recorder, accepted, _, wall = run_load(
            port, args.seconds, ballots, readers=args.readers, writers=args.writers,
            debate_readers=args.debate_readers)
        print(f"CPU used: {cpu_report(before, cpu_seconds())}")
        targets = {"GET /api/leaderboard": (300, 0.050), "POST /api/battles/{id}/vote": (100, None)}
        for name in sorted(recorder.latency):
            times = recorder.latency[name]
            ok = recorder.statuses[name][200]
            errors = {s: n for s, n in recorder.statuses[name].items() if s != 200}
            rate = ok / wall
            line = (f"{name:34} {rate:7.1f}/s ok  p50 {percentile(times, 50) * 1000:6.1f} ms  "
                    f"p95 {percentile(times, 95) * 1000:6.1f} ms  p99 "
                    f"{percentile(times, 99) * 1000:6.1f} ms  errors {errors or 'none'}")
            if name in targets:
                least, p95 = targets[name]
                met = rate >= least and (p95 is None or percentile(times, 95) <= p95)
                line += (f"  (target >= {least}/s" + (f", p95 <= {p95 * 1000:.0f} ms" if p95
                         else "") + f": {'met' if met else 'MISSED'})")
            print(line)
        # What the writers started finishes before the check (a worker may still stream), and
        # the votes' battles are classified (in batches, just after the votes).
        from battles.models import Vote
        from testkit.contract import no_step_unfinished

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (
                no_step_unfinished() and not Vote.objects.filter(categories_pending=True).exists()):
            time.sleep(0.5)
        problems = verify(accepted, ballots)
        print("database check: " + ("; ".join(problems) if problems else "all consistent"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

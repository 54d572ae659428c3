# ruff: noqa: T201 - a benchmark prints its figures
"""Battle latency on the real stack against a fake provider; prints figures, asserts nothing.

    .venv/bin/python benchmarks/battle_latency.py [--t-ms 1000] [--battles 20] [--bursts 20,100]
        [--run-command [--database-url postgresql://...]]

It builds a throwaway stack of its own: a temporary ``ARENA_VAR_DIR``, SQLite and the embedded
Redis (or, when ``DATABASE_URL`` / ``REDIS_URL`` are set, a throwaway database on that
PostgreSQL server and a queue of its own on that Redis), a migrated schema, daphne and a Celery
worker (threads), each in its own process as the run command starts them, and a fake
OpenAI-compatible provider whose two models answer in T ms. Then it measures

(a) a battle's wall time through ``POST /api/battles`` over T (the two sides run in parallel;
    target: at most T + 100 ms at T = 1 s), p50/p90 over ``--battles`` battles;
(b) the time from the provider sending its first token to that chunk arriving in a
    browser-like websocket client on ``/ws/battles/<id>/`` (target: p50 at most 50 ms);
(c) bursts of ``--bursts`` battles fired at once through the API (default 20 and 100): the
    total time and each battle's p50/p95 over one answer's time T (targets: 20 at once within
    1.5 T, 100 at once within 2.5 T), and every answer must hold its own prompt's unique token
    and no other's; it prints the counts. The workers run as the run command starts them
    (``CELERY_WORKER_PROCESSES`` processes of ``CELERY_WORKER_CONCURRENCY`` threads) unless
    ``--worker-processes`` / ``--worker-threads`` say otherwise.

With ``--run-command`` it drives the arena exactly as the README's run command starts it
(``python -m arena.devserver`` on a folder and port of its own, SQLite and the embedded Redis,
or ``--database-url`` for PostgreSQL), its models file naming the fake provider's two models,
the visitor limits raised only for the load client (it connects from 127.0.0.2,
``ARENA_RATE_LIMIT_RAISED_FOR``): (0) a battle sent the moment the address appears (target:
within 1.5 T), then (a) and (c).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import http.client
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this file's folder comes first on the path, where debates.py would hide
# the debates app: the project root replaces it.
sys.path[:] = [str(ROOT)] + [p for p in sys.path
                             if Path(p or ".").resolve() != ROOT / "benchmarks"]

from benchmarks.stack import (  # noqa: E402 - after the path is set
    cpu_report,
    cpu_seconds,
    describe,
    drop_database,
    migrated_stack,
    percentile,
    prepare_environment,
    start_run_command,
    start_web_process,
    start_worker_processes,
    throwaway_database,
)

TOKEN_RE = re.compile(r"tok[0-9a-f]{12}")
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"



# -- the fake provider --------------------------------------------------------------------------

def make_provider():
    from testkit.fake_providers import FakeOpenAIServer

    class TimedProvider(FakeOpenAIServer):
        """Logs the wall-clock time at which each request's first token is sent."""

        def __init__(self, **kwargs) -> None:
            super().__init__(**kwargs)
            self.first_token_at: dict[tuple[str, str], float] = {}  # time.time()
            self.arrived_at: dict[tuple[str, str], float] = {}  # time.monotonic()
            self.finished_at: dict[tuple[str, str], float] = {}  # time.monotonic()
            self.finished_wall: dict[tuple[str, str], float] = {}  # time.time()
            self._seen: set[str] = set()

        @staticmethod
        def key(rec) -> tuple[str, str]:
            found = TOKEN_RE.findall(json.dumps(rec.messages))
            return rec.model, found[-1] if found else ""

        def sse_preamble(self, rec, a) -> list[bytes]:
            self.arrived_at[self.key(rec)] = rec.time
            return super().sse_preamble(rec, a)

        def sse_token(self, rec, a, token: str) -> bytes:
            if a.request_id not in self._seen:
                self._seen.add(a.request_id)
                self.first_token_at[self.key(rec)] = time.time()  # just before it is written
            return super().sse_token(rec, a, token)

        def sse_finish(self, rec, a) -> list[bytes]:
            self.finished_at[self.key(rec)] = time.monotonic()
            self.finished_wall[self.key(rec)] = time.time()
            return super().sse_finish(rec, a)

    def reply(rec) -> str:
        users = [m for m in rec.messages if m.get("role") == "user"]
        return f"Reply of {rec.model} to: {users[-1]['content'] if users else ''}"

    return TimedProvider(api_key=None, reply_text=reply).start()


def create_models(provider) -> list:
    from arena.models import AIModel, ProviderKind

    common = {"provider": "Bench", "provider_kind": ProviderKind.OPENAI,
              "base_url": provider.base_url, "api_key_env": "", "max_tokens": 256}
    return [
        AIModel.objects.create(slug="bench-alpha", name="Bench Alpha", api_model="alpha-api",
                               **common),
        AIModel.objects.create(slug="bench-beta", name="Bench Beta", api_model="beta-api",
                               **common),
    ]


# -- HTTP and websocket clients -------------------------------------------------------------------

class Http:
    """One visitor: keeps its cookies, like a browser. ``SOURCE``: the address it connects
    from (the load client's, whose limits the arena under the run command raises)."""

    SOURCE: tuple[str, int] | None = None

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float = 300):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout,
                                          source_address=self.SOURCE)
        try:
            # A write shows the API it comes from the site (arena.api_writes), as a page's would.
            all_headers = {"Origin": f"http://127.0.0.1:{self.port}", **(headers or {})}
            if self.cookies:
                all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            conn.request(method, path, body=body, headers=all_headers)
            response = conn.getresponse()
            data = response.read()
            for value in response.headers.get_all("Set-Cookie") or []:
                name, _, rest = value.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
            return response.status, dict(response.headers), data
        finally:
            conn.close()

    def post_json(self, path: str, payload: dict):
        status, _, data = self.request("POST", path, json.dumps(payload).encode(),
                                       {"Content-Type": "application/json"})
        return status, json.loads(data) if data else None


class WebSocket:
    """A minimal RFC 6455 client (text frames, ping/pong, close) on asyncio streams."""

    def __init__(self, reader, writer) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, port: int, path: str, cookies: dict[str, str]) -> WebSocket:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        writer.write((
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Origin: http://127.0.0.1:{port}\r\nCookie: {cookie}\r\n\r\n"
        ).encode())
        await writer.drain()
        status = await reader.readline()
        headers = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        if b" 101 " not in status or headers.get("sec-websocket-accept") != accept:
            writer.close()
            raise ConnectionError(f"websocket refused: {status!r}")
        return cls(reader, writer)

    async def _send(self, opcode: int, payload: bytes = b"") -> None:
        mask = os.urandom(4)
        header = bytes([0x80 | opcode, 0x80 | len(payload)])  # control frames: < 126 bytes
        self.writer.write(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        await self.writer.drain()

    async def receive(self) -> tuple[float, str] | None:
        """(arrival wall-clock time, text) of the next message; None once closed."""
        parts: list[bytes] = []
        while True:
            first, second = await self.reader.readexactly(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                length = int.from_bytes(await self.reader.readexactly(2), "big")
            elif length == 127:
                length = int.from_bytes(await self.reader.readexactly(8), "big")
            mask = await self.reader.readexactly(4) if second & 0x80 else None
            payload = await self.reader.readexactly(length)
            arrived = time.time()
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                return None
            if opcode == 0x9:
                await self._send(0xA, payload)
            elif opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if first & 0x80:
                    return arrived, b"".join(parts).decode()

    async def close(self) -> None:
        with contextlib.suppress(OSError, ConnectionError):
            await self._send(0x8, (1000).to_bytes(2, "big"))
        self.writer.close()
        with contextlib.suppress(OSError, ConnectionError):
            await self.writer.wait_closed()


# -- measurements ---------------------------------------------------------------------------

def token() -> str:
    return f"tok{secrets.token_hex(6)}"


def own_answers_ok(body: dict, own: str) -> tuple[bool, bool]:
    """(both answers present and hold the own token, some answer holds another token)."""
    texts = [r.get("text", "") for r in body.get("responses", [])]
    present = len(texts) == 2 and all(own in t for t in texts)
    foreign = any(t != own for text in texts for t in TOKEN_RE.findall(text))
    return present, foreign


def measure_wall_time(port: int, provider, t_ms: int, battles: int) -> None:
    from battles.models import Response

    provider.total_time, provider.first_token_delay, provider.token_delay = t_ms / 1000, 0, 0
    for _ in range(2):  # warm-up: first imports, the endpoint probe, connection pools
        Http(port).post_json("/api/battles", {"prompt": f"Warm up {token()}"})
    walls, before, after, provider_ms, failures = [], [], [], [], 0
    cpu_before = cpu_seconds()
    for _ in range(battles):
        own = token()
        started = time.monotonic()
        status, body = Http(port).post_json("/api/battles", {"prompt": f"Say hello {own}"})
        ended = time.monotonic()
        walls.append((ended - started) * 1000)
        present, foreign = own_answers_ok(body or {}, own) if status == 200 else (False, False)
        failures += not present or foreign
        keys = [k for k in provider.arrived_at if k[1] == own]
        if status == 200 and len(keys) == 2:
            # Where the time over T goes: before the provider got both requests, and after
            # it sent both last tokens.
            before.append((max(provider.arrived_at[k] for k in keys) - started) * 1000)
            after.append((ended - max(provider.finished_at[k] for k in keys)) * 1000)
            provider_ms += list(Response.objects.filter(turn__battle_id=body["battle_id"])
                                .values_list("latency_ms", flat=True))
    cpu_after = cpu_seconds()
    over = [w - t_ms for w in walls]
    print(f"(a) POST /api/battles, provider answering in T = {t_ms} ms, {battles} battles "
          f"(after 2 warm-up battles), {failures} failed")
    print(f"    wall time   p50 {percentile(walls, 50):7.1f} ms   p90 {percentile(walls, 90):7.1f}"
          f" ms   min {min(walls):7.1f} ms   max {max(walls):7.1f} ms")
    print(f"    over T      p50 {percentile(over, 50):7.1f} ms   p90 {percentile(over, 90):7.1f}"
          f" ms   (target: at most 100 ms) -> "
          f"{'met' if percentile(over, 50) <= 100 else 'MISSED'} at p50, "
          f"{'met' if percentile(over, 90) <= 100 else 'MISSED'} at p90")
    print("    CPU per battle: " + ", ".join(
        f"{role} {(cpu_after[role] - cpu_before[role]) / battles * 1000:.1f} ms"
        for role in cpu_after))
    if before:
        print(f"    of which: POST -> provider has both requests p50 {percentile(before, 50):.1f}"
              f" ms; provider's last token -> API answer p50 {percentile(after, 50):.1f} ms;"
              f" provider call as the worker timed it p50 {percentile(provider_ms, 50):.0f} ms")


async def _watch_battle(port: int, provider) -> list[tuple[float, float, bool]]:
    """Start one battle like the page does and watch it over the socket; per side:
    (provider's first token, first chunk in the client, socket was open before the token)."""
    from battles.models import Battle

    visitor = Http(port)
    own = token()
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, visitor.request, "GET", "/battle/")
    form = urllib.parse.urlencode({"prompt": f"Count to three {own}"}).encode()
    status, headers, _ = await loop.run_in_executor(None, partial(
        visitor.request, "POST", "/battle/", form,
        {"Content-Type": "application/x-www-form-urlencoded",
         "X-CSRFToken": visitor.cookies.get("csrftoken", "")}))
    if status != 302:
        raise RuntimeError(f"POST /battle/ answered {status}")
    path = urllib.parse.urlsplit(headers["Location"]).path
    battle_id = path.strip("/").rsplit("/", 1)[-1]
    socket = await WebSocket.connect(port, f"/ws/battles/{battle_id}/", visitor.cookies)
    opened = time.time()
    first_chunk: dict[str, float] = {}
    finished = 0
    try:
        while finished < 2:
            message = await asyncio.wait_for(socket.receive(), timeout=60)
            if message is None:
                break
            arrived, text = message
            event = json.loads(text)
            if event["event"] in ("delta", "snapshot") and event.get("text"):
                first_chunk.setdefault(event["position"], arrived)
            elif event["event"] in ("done", "failed"):
                finished += 1
    finally:
        await socket.close()
    battle = await loop.run_in_executor(None, lambda: Battle.objects.select_related(
        "model_a", "model_b").get(pk=battle_id))
    samples = []
    for slot in ("a", "b"):
        model = battle.model_in(slot)
        sent = provider.first_token_at.get((model.api_model, own))
        arrived = first_chunk.get(battle.position_of(slot))
        if sent is not None and arrived is not None:
            samples.append((sent, arrived, opened < sent))
    return samples


def measure_first_chunk(port: int, provider, battles: int) -> None:
    # A short pause before the first token, as real providers have, so that the page's socket
    # is open by then (the page connects right after the redirect).
    provider.total_time, provider.first_token_delay, provider.token_delay = None, 0.3, 0.02

    async def run() -> list[tuple[float, float, bool]]:
        samples = []
        for _ in range(battles):
            samples += await _watch_battle(port, provider)
        return samples

    samples = asyncio.run(run())
    delays = [(arrived - sent) * 1000 for sent, arrived, open_before in samples if open_before]
    late = sum(1 for *_, open_before in samples if not open_before)
    print(f"(b) provider's first token -> first chunk in a websocket client on /ws/battles/<id>/,"
          f" {len(delays)} answers of {battles} battles"
          + (f" ({late} left out: the socket opened after the token)" if late else ""))
    if delays:
        print(f"    delay       p50 {percentile(delays, 50):7.1f} ms   p90 "
              f"{percentile(delays, 90):7.1f} ms   min {min(delays):7.1f} ms   max "
              f"{max(delays):7.1f} ms   (target: p50 at most 50 ms) -> "
              f"{'met' if percentile(delays, 50) <= 50 else 'MISSED'}")


def measure_concurrent(port: int, provider, t_ms: int, concurrent: int) -> float:
    """One burst; its total time over T."""
    from arena.steps import StepStatus
    from battles.models import Response

    provider.total_time, provider.first_token_delay, provider.token_delay = t_ms / 1000, 0, 0
    tokens = [token() for _ in range(concurrent)]
    barrier = threading.Barrier(concurrent)

    answered_at: dict[str, float] = {}  # time.monotonic()
    answered_wall: dict[str, float] = {}  # time.time()

    def one(own: str):
        barrier.wait()
        started = time.perf_counter()
        try:
            status, body = Http(port).post_json("/api/battles", {"prompt": f"Echo {own}"})
        except (OSError, http.client.HTTPException, ValueError) as exc:
            return own, None, {"error": repr(exc)}, time.perf_counter() - started
        answered_at[own] = time.monotonic()
        answered_wall[own] = time.time()
        return own, status, body, time.perf_counter() - started

    started = time.perf_counter()
    started_monotonic = time.monotonic()
    cpu_before = cpu_seconds()
    with ThreadPoolExecutor(max_workers=concurrent) as pool:
        results = list(pool.map(one, tokens))
    wall = time.perf_counter() - started
    cpu_after = cpu_seconds()
    keys = [k for k in provider.arrived_at if k[1] in set(tokens)]
    arrived = sorted(provider.arrived_at[k] - started_monotonic for k in keys)
    finished = sorted(provider.finished_at[k] - started_monotonic for k in keys
                      if k in provider.finished_at)
    answered = lost = mixed = 0
    statuses: dict[str, int] = {}
    for own, status, body, _ in results:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        if status != 200:
            lost += 1
            continue
        present, foreign = own_answers_ok(body, own)
        answered += present and not foreign
        mixed += foreign or not present
    # The database agrees: every saved answer holds exactly its battle's token.
    saved_mixed = 0
    saved = Response.objects.filter(turn__prompt__in=[f"Echo {t}" for t in tokens])
    for response in saved.select_related("turn"):
        own = TOKEN_RE.findall(response.turn.prompt)[0]
        if response.status == StepStatus.DONE and set(TOKEN_RE.findall(response.text)) \
                != {own}:
            saved_mixed += 1
    done = saved.filter(status=StepStatus.DONE).count()
    durations = sorted(r[3] for r in results)
    t = t_ms / 1000
    print(f"(c) {concurrent} battles at once through POST /api/battles, T = {t_ms} ms")
    print(f"    answered with both answers holding their own token: {answered}/{concurrent};"
          f" lost: {lost}; mixed up: {mixed}; HTTP statuses: {statuses}")
    print(f"    saved answers done: {done}/{2 * concurrent}; saved answers with a foreign or"
          f" missing token: {saved_mixed}")
    print(f"    all {concurrent} answered in {wall:.2f} s = {wall / t:.2f} T; per battle p50 "
          f"{percentile(durations, 50):.2f} s = {percentile(durations, 50) / t:.2f} T, p95 "
          f"{percentile(durations, 95):.2f} s = {percentile(durations, 95) / t:.2f} T, max "
          f"{durations[-1]:.2f} s")
    print(f"    CPU used meanwhile: {cpu_report(cpu_before, cpu_after)}")
    from battles.models import Battle

    created = sorted((b.created_at.timestamp() - (time.time() - (time.monotonic()
                      - started_monotonic))) for b in Battle.objects.filter(
                          turns__prompt__in=[f"Echo {t}" for t in tokens]))
    if created:
        print(f"    battles were written (POST handled) for half after "
              f"{percentile(created, 50):.2f} s and for all after {created[-1]:.2f} s")
    tails = [(answered_at[own] - max(ends)) * 1000 for own in answered_at
             if len(ends := [provider.finished_at[k] for k in keys if k[1] == own
                             and k in provider.finished_at]) == 2]
    if tails:
        print(f"    from the provider's last token of a battle to its API answer: p50 "
              f"{percentile(tails, 50):.0f} ms, p95 {percentile(tails, 95):.0f} ms")
        # Of which: until the worker saved the later answer, then until the API answered.
        saved_at: dict[str, float] = {}
        for response in saved.select_related("turn"):
            own = TOKEN_RE.findall(response.turn.prompt)[0]
            saved_at[own] = max(saved_at.get(own, 0.0), response.updated_at.timestamp())
        to_save = [(saved_at[own] - max(provider.finished_wall[k] for k in keys if k[1] == own))
                   * 1000 for own in answered_wall if own in saved_at]
        to_answer = [(answered_wall[own] - saved_at[own]) * 1000 for own in answered_wall
                     if own in saved_at]
        print(f"      of which last token -> later answer saved p50 {percentile(to_save, 50):.0f}"
              f" ms, p95 {percentile(to_save, 95):.0f} ms; saved -> API answer p50 "
              f"{percentile(to_answer, 50):.0f} ms, p95 {percentile(to_answer, 95):.0f} ms")
    if arrived and finished:
        print(f"    the provider had half the requests after {percentile(arrived, 50):.2f} s and "
              f"all {len(arrived)} after {arrived[-1]:.2f} s; it sent the last token of half "
              f"after {percentile(finished, 50):.2f} s and of all after {finished[-1]:.2f} s")
    return wall / t



# -- main -----------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--t-ms", type=int, default=1000, help="provider answer time (ms)")
    parser.add_argument("--battles", type=int, default=20, help="battles for (a) and (b)")
    parser.add_argument("--bursts", default="20,100",
                        help="comma-separated numbers of battles fired at once for (c)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="bursts of each size, one after the other (the first opens the "
                             "pools; the median of the rest is what a running arena sees)")
    parser.add_argument("--worker-threads", type=int, default=None,
                        help="Celery worker threads (default: the run command's)")
    parser.add_argument("--worker-processes", type=int, default=None,
                        help="Celery worker processes (default: the run command's)")
    parser.add_argument("--run-command", action="store_true",
                        help="drive the arena as the README's run command starts it, from the "
                             "moment it prints its address (instead of a stack of its own)")
    parser.add_argument("--database-url", default=None,
                        help="with --run-command: a PostgreSQL server for a throwaway database "
                             "of the arena's (default: the run command's SQLite file)")
    args = parser.parse_args()
    if args.run_command:
        run_command_main(args)
        return

    info = prepare_environment()
    with contextlib.ExitStack() as stack:
        migrated_stack(stack, info)
        from django.conf import settings

        from arena.celery import app

        port = start_web_process(stack)

        threads = args.worker_threads or settings.CELERY_WORKER_CONCURRENCY
        processes = args.worker_processes or settings.CELERY_WORKER_PROCESSES
        provider = make_provider()
        stack.callback(provider.stop)
        create_models(provider)
        start_worker_processes(stack, app, threads, processes)

        print(f"Stack: daphne on 127.0.0.1:{port}, {processes} Celery worker process(es) of"
              f" {threads} threads, {describe(info)}, fake OpenAI-compatible provider")
        measure_wall_time(port, provider, args.t_ms, args.battles)
        measure_first_chunk(port, provider, args.battles)
        measure_bursts(port, provider, args)


def measure_bursts(port: int, provider, args) -> None:
    targets = {20: 1.5, 100: 2.5}
    for burst in (int(n) for n in args.bursts.split(",") if n.strip()):
        runs = [measure_concurrent(port, provider, args.t_ms, burst)
                for _ in range(args.repeat)]
        if len(runs) > 1:
            # The first burst of a size also opens the workers' threads, database
            # connections and provider connections; the rest find them open.
            middle = statistics.median(runs[1:]) if len(runs) > 2 else runs[-1]
            target = targets.get(burst)
            print(f"(c) {burst} at once, {len(runs)} runs: " + ", ".join(
                f"{r:.2f} T" for r in runs) + f"; the first {runs[0]:.2f} T, the later "
                f"ones' median {middle:.2f} T" + (f" (target: within {target} T) -> "
                f"{'met' if middle <= target else 'MISSED'}" if target else ""))
    sys.stdout.flush()


# -- through the run command ----------------------------------------------------------------

LOAD_CLIENT = "127.0.0.2"  # the limits the arena raises are this address's alone
MODELS_FILE = """models:
  - {{id: bench-alpha, name: Bench Alpha, model: alpha-api, kind: openai, provider: Bench,
      base_url: "{url}", organization: Bench, license: proprietary, max_tokens: 256}}
  - {{id: bench-beta, name: Bench Beta, model: beta-api, kind: openai, provider: Bench,
      base_url: "{url}", organization: Bench, license: proprietary, max_tokens: 256}}
"""


def run_command_main(args) -> None:
    """(0) a battle sent the moment the run command prints its address (target: within
    1.5 T), then (a) and (c) against that arena. The arena is the run command's, unchanged
    but for its models file (the fake provider's two models), its own folder and port, the
    load client's raised visitor limits and no per-provider budget for the fake provider."""
    var_dir = tempfile.mkdtemp(prefix="arena-bench-run-")
    provider = make_provider()
    t = args.t_ms / 1000
    provider.total_time, provider.first_token_delay, provider.token_delay = t, 0, 0
    models = Path(var_dir) / "models.yaml"
    models.write_text(MODELS_FILE.format(url=provider.base_url))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "REDIS_URL", "CACHE_PREFIX", "CELERY_QUEUE")}
    database = throwaway_database(args.database_url or "")
    if database["database_url"]:  # PostgreSQL, as in production, instead of the SQLite file
        env["DATABASE_URL"] = os.environ["DATABASE_URL"] = database["database_url"]
    env.update(ARENA_VAR_DIR=var_dir, ARENA_MODELS_FILE=str(models), PORT=str(port),
               ARENA_RATE_LIMIT_RAISED_FOR=f"{LOAD_CLIENT}/32",
               ARENA_RATE_LIMIT_RAISED_MULTIPLIER="1000", ARENA_PROVIDER_CALLS_PER_MINUTE="0")
    Http.SOURCE = (LOAD_CLIENT, 0)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, var_dir, ignore_errors=True)
        stack.callback(drop_database, database)
        stack.callback(provider.stop)
        port, announced = start_run_command(stack, env)
        own = token()
        started = time.monotonic()
        status, body = Http(port).post_json("/api/battles", {"prompt": f"Echo {own}"})
        wall = time.monotonic() - started
        present, foreign = own_answers_ok(body or {}, own) if status == 200 else (False, False)
        print(f"Run command: the address came {announced:.1f} s after the start; "
              f"{describe_run_command(env)}")
        print(f"(0) a battle sent the moment the address appeared: HTTP {status}, answers "
              f"{'complete' if present and not foreign else 'WRONG'}, {wall:.2f} s = "
              f"{wall / t:.2f} T (target: within 1.5 T) -> "
              f"{'met' if status == 200 and wall <= 1.5 * t else 'MISSED'}")
        keys = [k for k in provider.arrived_at if k[1] == own]
        if len(keys) == 2 and all(k in provider.finished_at for k in keys):
            print(f"    of which: POST -> provider has both requests "
                  f"{(max(provider.arrived_at[k] for k in keys) - started) * 1000:.0f} ms; "
                  f"provider's last token -> API answer "
                  f"{(started + wall - max(provider.finished_at[k] for k in keys)) * 1000:.0f}"
                  " ms")
        sys.stdout.flush()
        os.environ.update(ARENA_VAR_DIR=var_dir, DJANGO_SETTINGS_MODULE="arena.settings")
        import django

        django.setup()  # the benchmark reads the arena's own database from here on
        measure_wall_time(port, provider, args.t_ms, args.battles)
        measure_bursts(port, provider, args)


def describe_run_command(env: dict[str, str]) -> str:
    cores = os.cpu_count() or 1
    web = env.get("ARENA_WEB_PROCESSES", f"{cores} (one per core)")
    workers = env.get("CELERY_WORKER_PROCESSES", f"{cores} (one per core)")
    local = "off" if env.get("ARENA_LOCAL_MODELS") == "0" else "on"
    return (f"daphne processes {web}, Celery worker processes {workers}, local models {local},"
            f" {'PostgreSQL' if env.get('DATABASE_URL') else 'SQLite'} and the embedded Redis,"
            " the fake provider's two models")


if __name__ == "__main__":
    main()

# ruff: noqa: T201 - a benchmark prints its figures
"""Voice proxy benchmarks on a throwaway stack (daphne as the run command starts it);
prints figures, asserts nothing.

    .venv/bin/python benchmarks/voice_proxy.py [--frames 500] [--calls 100] [--seconds 10]
                                               [--agent-turns 5]

(a) one call to the echo agent: the round trip of each 20 ms frame, browser → proxy → agent →
    proxy → browser, over loopback (what the proxy adds, network included; target p99 ≤ 5 ms);
(b) ``--calls`` calls at once, each sending 20 ms frames in real time for ``--seconds``:
    frames lost (sent but never echoed) and the round trips under that load (target: 100
    calls on this 2-core machine without a dropped frame);
(c) ``--agent-turns`` calls to the offline agent (Whisper tiny.en + SmolLM2 on the local
    model server + eSpeak NG), the caller saying one line each: the turn gap measured from
    the recordings with VAD (caller stops → agent starts), p50 and p95.

The load generator is this process (asyncio, the ``websockets`` client), on the same two
cores as daphne: its own cost is in the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path
                             if Path(p or ".").resolve() != ROOT / "benchmarks"]

from benchmarks.stack import (  # noqa: E402 - after the path is set
    describe,
    migrated_stack,
    percentile,
    prepare_environment,
    start_web_process,
    stop_process,
)

FRAME_BYTES = 640
FRAME_SECONDS = 0.02


def battles(count: int, provider: str) -> list[tuple[str, str]]:
    """``count`` battles of two agents of ``provider``, each owned by a session of its own:
    (battle id, session key)."""
    from agents.models import AgentBattle, AgentConfiguration, Scenario
    from testkit.visitors import visitor_session_key

    scenario = Scenario.objects.get(slug="haircut-appointment")
    Scenario.objects.filter(pk=scenario.pk).update(max_duration_seconds=600)
    scenario.refresh_from_db()
    if provider == "echo":
        pair = [AgentConfiguration.objects.get_or_create(
            slug=f"echo-{n}", defaults={"name": f"Echo {n}", "provider": "echo"})[0]
            for n in "ab"]
    else:
        pair = [AgentConfiguration.objects.get(slug="local-smollm2"),
                AgentConfiguration.objects.get(slug="local-qwen")]
    made = []
    for _ in range(count):
        key = visitor_session_key()
        battle = AgentBattle.objects.create(session_key=key, scenario=scenario,
                                            config_a=pair[0], config_b=pair[1])
        made.append((str(battle.pk), key))
    return made


def _connect(port: int, battle_id: str, key: str):
    from django.conf import settings
    from websockets.asyncio.client import connect

    return connect(f"ws://127.0.0.1:{port}/battles/{battle_id}/agent-stream?agent=a",
                   additional_headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={key}",
                                       "Origin": f"http://127.0.0.1:{port}"},
                   max_queue=None, ping_interval=None)


async def echo_call(port: int, battle_id: str, key: str, seconds: float,
                    round_trips: list[float]) -> tuple[int, int]:
    """One call to the echo agent, frames paced in real time; (sent, echoed)."""
    async with _connect(port, battle_id, key) as socket:
        while json.loads(await socket.recv()).get("type") != "started":
            pass
        sent_at: dict[int, float] = {}
        echoed = 0
        frames = int(seconds / FRAME_SECONDS)

        async def receive():
            nonlocal echoed
            async for message in socket:
                if isinstance(message, bytes):
                    (number,) = struct.unpack_from("<I", message)
                    round_trips.append((time.perf_counter() - sent_at.pop(number)) * 1000)
                    echoed += 1
                    if echoed == frames:
                        return

        receiver = asyncio.create_task(receive())
        loop = asyncio.get_running_loop()
        start = loop.time()
        for number in range(frames):
            frame = struct.pack("<I", number) + bytes(FRAME_BYTES - 4)
            sent_at[number] = time.perf_counter()
            await socket.send(frame)
            await asyncio.sleep(max(0.0, start + (number + 1) * FRAME_SECONDS - loop.time()))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(receiver, timeout=10)
        receiver.cancel()
        await socket.send(json.dumps({"type": "end"}))
        return frames, echoed


def one_call(port: int, frames: int) -> None:
    (battle_id, key), = battles(1, "echo")
    round_trips: list[float] = []
    sent, echoed = asyncio.run(echo_call(port, battle_id, key, frames * FRAME_SECONDS,
                                         round_trips))
    print(f"(a) one call, {sent} frames of 20 ms through the proxy to the echo agent and back:")
    print(f"    round trip p50 {percentile(round_trips, 50):.2f} ms, p99 "
          f"{percentile(round_trips, 99):.2f} ms, max {max(round_trips):.2f} ms; "
          f"{sent - echoed} lost")


def many_calls(port: int, calls: int, seconds: float) -> None:
    made = battles(calls, "echo")
    round_trips: list[float] = []

    async def run():
        return await asyncio.gather(*(echo_call(port, b, k, seconds, round_trips)
                                      for b, k in made), return_exceptions=True)

    started = time.perf_counter()
    results = asyncio.run(run())
    failed = [r for r in results if isinstance(r, BaseException)]
    done = [r for r in results if not isinstance(r, BaseException)]
    sent = sum(s for s, _e in done)
    lost = sum(s - e for s, e in done)
    print(f"(b) {calls} calls at once, {seconds:.0f} s of real-time audio each "
          f"({time.perf_counter() - started:.1f} s wall):")
    print(f"    {sent} frames sent, {lost} lost, {len(failed)} calls failed"
          + (f" ({type(failed[0]).__name__}: {failed[0]})" if failed else ""))
    print(f"    round trip p50 {percentile(round_trips, 50):.2f} ms, p99 "
          f"{percentile(round_trips, 99):.2f} ms, max {max(round_trips, default=0):.2f} ms")


async def agent_call(port: int, battle_id: str, key: str, line: bytes) -> None:
    """Greeting, then the caller's line, then silence until the agent has answered."""
    async with _connect(port, battle_id, key) as socket:
        loop = asyncio.get_running_loop()
        start = loop.time()
        sent = 0
        quiet = bytes(FRAME_BYTES)
        script = [quiet] * 150 + [line[i:i + FRAME_BYTES].ljust(FRAME_BYTES, b"\0")
                                  for i in range(0, len(line), FRAME_BYTES)]
        replies = 0
        answered = asyncio.Event()

        async def receive():
            nonlocal replies
            async for message in socket:
                if isinstance(message, str):
                    event = json.loads(message)
                    if event.get("type") == "transcript" and event.get("role") == "user":
                        replies += 1
                    if event.get("state") == "listening" and replies:
                        answered.set()

        receiver = asyncio.create_task(receive())
        while not answered.is_set() and sent < 3000:  # at most a minute
            await socket.send(script[sent] if sent < len(script) else quiet)
            sent += 1
            await asyncio.sleep(max(0.0, start + sent * FRAME_SECONDS - loop.time()))
        await socket.send(json.dumps({"type": "end"}))
        with contextlib.suppress(Exception):
            await asyncio.wait_for(receiver, timeout=10)


def agent_turns(port: int, count: int) -> None:
    from agents.models import AgentConversation
    from agents.speech.tts import synthesize
    from agents.steps import _measure_latency
    from agents.tests.voice_support import CALLER_LINE
    from arena.selectors import model_with_availability

    server = subprocess.Popen([sys.executable, "-m", "arena.local_models", "serve"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not model_with_availability("smollm2-135m")[1].available:
            if time.monotonic() > deadline:
                print("(c) skipped: the local model server did not start")
                return
            time.sleep(1)
        gaps = []
        for battle_id, key in battles(count, "local"):
            asyncio.run(agent_call(port, battle_id, key, synthesize(CALLER_LINE)))
            conversation = AgentConversation.objects.get(battle_id=battle_id)
            fields, _ = _measure_latency(conversation)
            gaps += [g["gap_ms"] for g in fields["turn_gaps_json"]]
        print(f"(c) the offline agent (SmolLM2), {count} calls, one caller line each: "
              f"{len(gaps)} turns answered")
        if gaps:
            print(f"    turn gap from the recordings p50 {percentile(gaps, 50):.0f} ms, "
                  f"p95 {percentile(gaps, 95):.0f} ms (mean {statistics.mean(gaps):.0f} ms)")
    finally:
        stop_process(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=500)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--agent-turns", type=int, default=5)
    args = parser.parse_args()
    info = prepare_environment()
    import os

    os.environ["ARENA_LOCAL_MODELS"] = "1" if args.agent_turns else "0"
    os.environ["ARENA_VOICE_BATTLES_PER_HOUR"] = "0"
    with contextlib.ExitStack() as stack:
        migrated_stack(stack, info)
        from django.core.management import call_command

        call_command("seed", verbosity=0)
        port = start_web_process(stack)
        print(f"voice proxy on {describe(info)}, daphne as the run command starts it")
        one_call(port, args.frames)
        if args.calls:
            many_calls(port, args.calls, args.seconds)
        if args.agent_turns:
            agent_turns(port, args.agent_turns)


if __name__ == "__main__":
    main()

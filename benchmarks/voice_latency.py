# ruff: noqa: T201 - a benchmark prints its figures
"""How soon a caller hears the offline voice agent on a fresh arena; prints figures, asserts
nothing.

    .venv/bin/python benchmarks/voice_latency.py [--battles 2] [--keep]
                                                 [--url http://127.0.0.1:8000]

Without ``--url`` it starts a fresh arena with the run command (``python -m arena.devserver``,
``PORT=0``, a new ``ARENA_VAR_DIR``: nothing loaded or cached), waits until voice battles can
be generated (the local models answer: what a person waiting for the page would see), and
is at once the first caller, as the browser is: ``POST /battles/generate``, then each slot's
``WS /battles/{id}/agent-stream`` with the session cookie, a microphone sending 20 ms frames
of 16 kHz PCM in real time, the caller's lines spoken by eSpeak NG after each greeting and
reply has played. Per call it measures, on this client's clock:

* greeting: from the socket's opening to the first frame of the agent's audio;
* reply: from the caller's end of turn (the last frame of their speech sent) to the first
  frame of the answer: the agent's 600 ms end-of-turn silence, Whisper, the model's first
  words and eSpeak NG, all included.

After both calls of a battle it votes a tie to learn which model each agent ran on.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path
                             if Path(p or ".").resolve() != ROOT / "benchmarks"]

from agents.speech.audio import FRAME_BYTES, FRAME_MS, frames  # noqa: E402
from agents.speech.tts import synthesize  # noqa: E402

LINES = ("Hello, I would like to book an appointment for Tuesday at three.",
         "My name is John Smith, and my phone number is five five five, one two three.",
         "Thank you. Is there anything else you need from me?")
LOCAL_MODELS = ("smollm2-135m", "qwen2.5-coder-0.5b")
SESSION_COOKIE = "sessionid"
RUNNING = re.compile(r"The arena is running at (http://\S+?)/? ")
TURN_SECONDS = 60


def speech(text: str) -> bytes:
    """eSpeak NG's ``text`` with its leading and trailing silence cut: the last frame sent is
    the caller's end of turn."""
    samples = np.frombuffer(synthesize(text), dtype="<i2")
    loud = np.flatnonzero(np.abs(samples) > 300)
    return samples[loud[0]:loud[-1] + 1].tobytes()


@dataclass
class Call:
    label: str
    greeting: float | None = None
    replies: list[float] = field(default_factory=list)
    end: str = ""


class Caller:
    """One call: a microphone paced in real time, and what the agent sends back."""

    def __init__(self, socket) -> None:  # noqa: ANN001 - a websockets connection
        self.socket = socket
        self.lines: asyncio.Queue[bytes] = asyncio.Queue()
        self.spoke_until: float | None = None  # when the last line's last frame went
        self.first_audio: float | None = None
        self.first_audio_after_turn: float | None = None
        self.state = ""
        self.thought = False  # the agent began thinking about the line just said
        self.changed = asyncio.Event()
        self.ended = ""

    async def microphone(self) -> None:
        loop = asyncio.get_running_loop()
        started, sent = loop.time(), 0
        quiet = bytes(FRAME_BYTES)
        while True:
            line = [] if self.lines.empty() else list(frames(self.lines.get_nowait()))
            for frame in line or [quiet]:
                await self.socket.send(frame)
                sent += 1
                await asyncio.sleep(max(0.0, started + sent * FRAME_MS / 1000 - loop.time()))
            if line:
                self.spoke_until = time.perf_counter()

    def say(self, line: bytes) -> None:
        self.spoke_until = self.first_audio_after_turn = None
        self.thought = False
        self.lines.put_nowait(line)

    async def listen(self) -> None:
        async for message in self.socket:
            now = time.perf_counter()
            if isinstance(message, bytes):
                if self.first_audio is None:
                    self.first_audio = now
                if self.spoke_until is not None and self.first_audio_after_turn is None:
                    self.first_audio_after_turn = now
                continue
            event = json.loads(message)
            if event.get("type") == "status":
                self.state = event["state"]
                self.thought = self.thought or (self.state == "thinking"
                                                and self.spoke_until is not None)
            elif event.get("type") in ("session_end", "error"):
                self.ended = event.get("reason") or event.get("detail", "")
            self.changed.set()

    async def until(self, done, seconds: float = TURN_SECONDS) -> bool:  # noqa: ANN001
        deadline = time.perf_counter() + seconds
        while not done():
            if self.ended or time.perf_counter() > deadline:
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=0.5)
        return True


async def call(base: str, battle_id: str, label: str, cookie: str,
               lines: list[bytes]) -> Call:
    from websockets.asyncio.client import connect

    url = base.replace("http", "ws", 1) + f"/battles/{battle_id}/agent-stream?agent={label}"
    figures = Call(label)
    async with connect(url, additional_headers={"Cookie": f"{SESSION_COOKIE}={cookie}",
                                                "Origin": base},
                       max_queue=None, ping_interval=None) as socket:
        opened = time.perf_counter()
        caller = Caller(socket)
        tasks = [asyncio.create_task(caller.microphone()), asyncio.create_task(caller.listen())]
        try:
            # The greeting has played once the agent listens after speaking.
            if await caller.until(lambda: caller.first_audio and caller.state == "listening"):
                figures.greeting = caller.first_audio - opened
            for line in lines:
                if caller.ended:
                    break
                caller.say(line)
                # Heard, or nothing to hear (Whisper heard no words: the agent listens again).
                await caller.until(lambda: caller.first_audio_after_turn is not None or (
                    caller.thought and caller.state == "listening"))
                if caller.first_audio_after_turn is not None:
                    figures.replies.append(caller.first_audio_after_turn - caller.spoke_until)
                await caller.until(lambda: caller.state == "listening")
                await asyncio.sleep(0.5)  # a caller's breath before the next line
            if not caller.ended:
                await socket.send(json.dumps({"type": "end"}))
                await caller.until(lambda: False, seconds=10)
        finally:
            for task in tasks:
                task.cancel()
        figures.end = caller.ended
    return figures


class FreshArena:
    """The run command on a new var folder and a free port; its log kept in the folder."""

    def __init__(self) -> None:
        self.var_dir = tempfile.mkdtemp(prefix="arena-voice-latency-")
        env = {**os.environ, "PORT": "0", "ARENA_VAR_DIR": self.var_dir,
               "ARENA_VOICE_BATTLES_PER_HOUR": "0"}
        self.log = open(Path(self.var_dir) / "run.log", "w")  # noqa: SIM115 - closed in stop
        self.started = time.perf_counter()
        self.process = subprocess.Popen([sys.executable, "-m", "arena.devserver"], cwd=ROOT,
                                        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, start_new_session=True)
        self.url: str | None = None
        self._found = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.log.write(line)
            self.log.flush()
            match = RUNNING.search(line)
            if match and not self._found.is_set():
                self.url = match.group(1)
                self._found.set()

    def wait(self, seconds: float = 300) -> str:
        if not self._found.wait(seconds) or self.url is None:
            raise SystemExit(f"the arena did not start; see {self.log.name}")
        return self.url

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._reader.join(10)
        self.log.close()


def wait_for_voice(client: httpx.Client, seconds: float = 300) -> None:
    """Until both local models can take calls (GET /api/models lists them)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            listed = {m["model_id"] for m in client.get("/api/models").json()["models"]}
            if set(LOCAL_MODELS) <= listed:
                return
        time.sleep(0.2)
    raise SystemExit("the local models never became available")


def battle(client: httpx.Client, base: str, lines: list[bytes]) -> list[tuple[str, Call]]:
    """Both calls of a new battle, then a tie vote: (the model's name, the call's figures)."""
    answer = client.post("/battles/generate", json={"battle_type": "agent"})
    answer.raise_for_status()
    battle_id = answer.json()["battle_id"]
    cookie = client.cookies[SESSION_COOKIE]
    calls = [asyncio.run(call(base, battle_id, label, cookie, lines)) for label in "ab"]
    voted = client.post(f"/battles/{battle_id}/vote", json={"overall": "tie"})
    reveal = voted.json().get("reveal") or {} if voted.status_code == 200 else {}
    return [(reveal.get(c.label, {}).get("name", "?"), c) for c in calls]


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def seconds(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values) or "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--battles", type=int, default=2)
    parser.add_argument("--url", help="a running arena instead of a fresh one")
    parser.add_argument("--keep", action="store_true",
                        help="keep the fresh arena's var folder (its log is run.log)")
    args = parser.parse_args()
    lines = [speech(text) for text in LINES]
    arena = None if args.url else FreshArena()
    completed = False
    try:
        base = (args.url or arena.wait()).rstrip("/")
        if arena:
            print(f"fresh arena (run command, var folder {arena.var_dir}): address printed "
                  f"{time.perf_counter() - arena.started:.1f} s after start")
        client = httpx.Client(base_url=base, headers={"Origin": base}, timeout=60)
        wait_for_voice(client)
        if arena:
            print(f"voice battles possible {time.perf_counter() - arena.started:.1f} s after "
                  "start; the first call follows at once")
        print(f"{os.cpu_count()} cores; load average {load()} at the first call")
        greetings, replies, first_replies = [], [], []
        for number in range(args.battles):
            for name, figures in battle(client, base, lines):
                greeting = "none" if figures.greeting is None else f"{figures.greeting:.2f}"
                print(f"battle {number + 1} call {figures.label.upper()} ({name}): greeting "
                      f"{greeting} s after open; replies {seconds(figures.replies)} s after "
                      f"the end of turn" + (f"; ended: {figures.end}" if figures.end else ""))
                if figures.greeting is not None:
                    greetings.append(figures.greeting)
                replies += figures.replies
                first_replies += figures.replies[:1]
        print(f"greeting after open: first call {seconds(greetings[:1])} s, p50 "
              f"{statistics.median(greetings):.2f} s, max {max(greetings):.2f} s "
              f"({len(greetings)} calls)" if greetings else "greeting: never heard")
        print(f"reply after end of turn: first {seconds(replies[:1])} s, p50 "
              f"{statistics.median(replies):.2f} s, max {max(replies):.2f} s ({len(replies)} "
              f"turns); each call's first reply p50 {statistics.median(first_replies):.2f} s"
              if replies else "reply: never heard")
        print(f"load average {load()} at the end (other work on this machine slows every "
              "figure)")
        completed = True
    finally:
        if arena:
            arena.stop()
            if completed and not args.keep:  # the joined Qwen file alone is 400 MB
                shutil.rmtree(arena.var_dir, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Two arenas side by side on one machine: each picks its own free ports, knows its own model
servers, answers with its own local models, and a third start on a used folder is refused."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from django.conf import settings

pytestmark = pytest.mark.local_model

LOCAL = ("smollm2-135m", "qwen2.5-coder-0.5b")
HEALTH_TOKEN = "two-arenas-health"  # the detailed /healthz names models and workers
RUNNING_AT = re.compile(r"The arena is running at (http://127\.0\.0\.1:\d+)/")


class Arena:
    def __init__(self, var_dir: Path) -> None:
        self.var_dir = var_dir
        var_dir.mkdir(parents=True, exist_ok=True)
        self.log = var_dir / "run.log"
        env = {k: v for k, v in os.environ.items()
               if k not in ("DATABASE_URL", "REDIS_URL", "CACHE_PREFIX", "PORT",
                            "ARENA_LOCAL_MODEL_PORT_SMOLLM2", "ARENA_LOCAL_MODEL_PORT_QWEN")}
        env.update(ARENA_VAR_DIR=str(var_dir), ARENA_LOCAL_MODELS="1", LOG_LEVEL="WARNING",
                   ARENA_ENV="development", ARENA_HEALTH_TOKEN=HEALTH_TOKEN,
                   ARENA_WEB_PROCESSES="2")
        self.env = env
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "arena.devserver"], cwd=settings.BASE_DIR, env=env,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.url = ""
        self.ready_when_announced: int | None = None

    def wait_ready(self, timeout: float = 300) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()[-3000:]
            found = RUNNING_AT.search(self.log.read_text())
            if found:
                if not self.url:  # first seen: ready means ready
                    self.url = found.group(1)
                    self.ready_when_announced = httpx.get(f"{self.url}/healthz/ready",
                                                          timeout=5).status_code
                try:
                    health = httpx.get(f"{self.url}/healthz", timeout=5, headers={
                        "Authorization": f"Bearer {HEALTH_TOKEN}"}).json()
                except (httpx.HTTPError, ValueError):
                    health = {}
                models = health.get("models", {}).get("models", {})
                # Ready: its local models answer and its worker does (the worker can come up
                # a moment after the models, so both are waited for).
                if (all(models.get(slug, {}).get("available") for slug in LOCAL)
                        and health.get("worker", {}).get("ok")):
                    return health
            threading.Event().wait(0.5)
        raise AssertionError(f"arena not ready: {self.log.read_text()[-3000:]}")

    def record(self) -> dict:
        return json.loads((self.var_dir / "local_models.json").read_text())

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def web_listeners(arena: Arena) -> list[set[str]]:
    """For each of the arena's daphne processes, the listening TCP sockets it holds (daphne
    adopts the inherited descriptor under another number, so they are found by inode)."""
    pids = re.findall(r"started daphne \d+ \(pid (\d+)\)", arena.log.read_text())
    assert len(pids) == 2, arena.log.read_text()[-2000:]
    listening = {line.split()[9] for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
                 if line.split()[3] == "0A"}  # 0A: LISTEN
    held = []
    for pid in pids:
        fds = Path("/proc") / pid / "fd"
        links = {os.readlink(fd) for fd in fds.iterdir()}
        held.append({link for link in links if link[len("socket:["):-1] in listening
                     and link.startswith("socket:[")})
    return held


def processes_of(var_dir: Path) -> list[int]:
    """Processes whose environment names this var folder (the arena's children)."""
    found = []
    marker = f"ARENA_VAR_DIR={var_dir}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_two_arenas_run_side_by_side(tmp_path):
    first = Arena(tmp_path / "first")
    arenas = [first]
    try:
        first_health = first.wait_ready()
        # The address comes once the arena is ready: the web answers and has warmed up, a
        # worker beats and the local models have settled, each logged as it got there.
        log = first.log.read_text()
        running = log.index("The arena is running at")
        for part in ("the web", "the web's warm-up", "a worker", "the local models"):
            assert log.index(f"{part} ready after") < running
        assert first.ready_when_announced == 200
        second = Arena(tmp_path / "second")
        arenas.append(second)
        second_health = second.wait_ready()

        assert first.url != second.url
        # Each arena's two daphne processes share its one port; the arenas share nothing.
        first_held, second_held = web_listeners(first), web_listeners(second)
        assert len(first_held[0]) == 1 and first_held[0] == first_held[1], first_held
        assert len(second_held[0]) == 1 and second_held[0] == second_held[1], second_held
        assert first_held[0] != second_held[0]
        one, two = first.record(), second.record()
        assert one["token"] != two["token"]
        assert set(one["ports"].values()).isdisjoint(two["ports"].values())
        for health in (first_health, second_health):
            assert health["database"]["ok"] and health["redis"]["ok"]
            assert health["worker"]["ok"]

        # Each arena's own local models answer its battles.
        for arena in arenas:
            answer = httpx.post(f"{arena.url}/api/battles", headers={"Origin": arena.url},
                                json={"prompt": "What is the capital of France?"}, timeout=180)
            assert answer.status_code == 200, answer.text
            assert all(r["text"].strip() for r in answer.json()["responses"])

        # A third start on a folder that is in use is refused with a clear word.
        third = subprocess.run([sys.executable, "-m", "arena.devserver"], cwd=settings.BASE_DIR,
                               env=first.env, capture_output=True, text=True, timeout=120)
        assert third.returncode == 2
        assert "another arena is running from" in third.stderr + third.stdout
    finally:
        for arena in arenas:
            arena.stop()
    for arena in arenas:
        assert processes_of(arena.var_dir) == []
        assert not (arena.var_dir / "local_models.json").exists()

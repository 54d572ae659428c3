"""A throwaway arena stack for the benchmarks: its own var folder, database (SQLite, or a
database of its own on the PostgreSQL server of DATABASE_URL), Redis (embedded, or a queue of
its own on REDIS_URL), daphne and Celery workers started as the run command starts them.

    info = prepare_environment()        # before Django is set up
    with contextlib.ExitStack() as stack:
        migrated_stack(stack, info)     # Django set up, Redis up, schema migrated
        port = start_web_process(stack)
        start_worker_processes(stack, app, threads, processes)
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What this stack started, by role ("daphne 0", "worker 0", ...), for the CPU figures.
STARTED: dict[str, subprocess.Popen] = {}


def prepare_environment() -> dict:
    """Point the settings at a throwaway stack; what was chosen, for the report and cleanup."""
    var_dir = tempfile.mkdtemp(prefix="arena-bench-")
    (Path(var_dir) / "static").mkdir()  # STATIC_ROOT: whitenoise warns when it is missing
    os.environ["ARENA_VAR_DIR"] = var_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["ARENA_LOCAL_MODELS"] = "0"
    os.environ["ARENA_BATTLES_PER_MINUTE"] = "0"  # no rate limit: the benchmark is the burst
    os.environ["ARENA_PROVIDER_CALLS_PER_MINUTE"] = "0"
    os.environ.setdefault("CACHE_PREFIX", f"arena-bench-{secrets.token_hex(4)}")
    # A queue of our own, so that no other worker on a shared Redis takes our tasks.
    os.environ["CELERY_QUEUE"] = f"arena-bench-{secrets.token_hex(4)}"
    info = {"var_dir": var_dir, **throwaway_database(os.environ.get("DATABASE_URL", ""))}
    if info["database_url"]:
        os.environ["DATABASE_URL"] = info["database_url"]
    return info


def throwaway_database(url: str) -> dict:
    """A new database on the PostgreSQL server of ``url`` (nothing for another URL): its
    URL, and what :func:`drop_database` needs."""
    url = url.strip()
    if not url.startswith(("postgres://", "postgresql://")):
        return {"database_url": None, "pg_admin_url": None, "pg_database": None}
    import psycopg

    parts = urllib.parse.urlsplit(url)
    name = f"arena_bench_{secrets.token_hex(4)}"
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return {"database_url": parts._replace(path=f"/{name}").geturl(), "pg_admin_url": admin,
            "pg_database": name}



def drop_database(info: dict) -> None:
    if not info["pg_database"]:
        return
    import psycopg

    with psycopg.connect(info["pg_admin_url"], autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{info["pg_database"]}" WITH (FORCE)')



def close_database_connections() -> None:
    """Before a fork: no connection (nor pooled socket) may be shared with the child."""
    from django.db import connections

    connections.close_all()
    for connection in connections.all(initialized_only=True):
        if getattr(connection, "pool", None) is not None:
            connection.close_pool()



def start_worker_processes(stack: contextlib.ExitStack, app, threads: int, count: int) -> None:
    """The Celery workers as the run command starts them: processes of their own (threads
    pool), on this benchmark's queue, so they share no interpreter lock with the clients and
    the fake provider of this process."""
    from arena.readiness import worker_beats
    from arena.webserver import worker_command

    queue = app.conf.task_default_queue
    for index in range(count):
        worker = subprocess.Popen(worker_command(index, queue=queue, loglevel="WARNING",
                                                 threads=threads), cwd=ROOT, env=os.environ.copy())
        stack.callback(stop_process, worker)
        STARTED[f"worker {index}"] = worker
        name = f"{queue}-{index}@{os.uname().nodename}"
        deadline = time.monotonic() + 60
        while not worker_beats(name):
            if worker.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("a Celery worker did not start")
            time.sleep(0.1)



def start_web_process(stack: contextlib.ExitStack) -> int:
    """daphne as the run command starts it (``ARENA_WEB_PROCESSES`` processes on one shared
    port, same command line); its port."""
    from django.conf import settings

    from arena.webserver import daphne_shared_command, web_answers, web_socket

    listener = web_socket("127.0.0.1", 0)
    stack.callback(listener.close)
    port = listener.getsockname()[1]
    servers = []
    for index in range(settings.ARENA_WEB_PROCESSES):
        server = subprocess.Popen(daphne_shared_command(listener), cwd=ROOT,
                                  env=os.environ.copy(), stdout=subprocess.DEVNULL,
                                  pass_fds=(listener.fileno(),))
        stack.callback(stop_process, server)
        STARTED[f"daphne {index}"] = server
        servers.append(server)
    deadline = time.monotonic() + 60
    while not web_answers(port):  # one answers; the others take their share once up
        if any(s.poll() is not None for s in servers) or time.monotonic() > deadline:
            raise SystemExit("daphne did not start")
        time.sleep(0.1)
    return port


RUNNING_AT = re.compile(rb"The arena is running at http://127\.0\.0\.1:(\d+)/")
STARTED_CHILD = re.compile(rb"started (.+?) (?:again )?\(pid (\d+)")


def start_run_command(stack: contextlib.ExitStack, env: dict[str, str],
                      timeout: float = 600) -> tuple[int, float]:
    """The arena exactly as the README's run command starts it (``python -m arena.devserver``
    with ``env``), stopped with Ctrl-C's signal when ``stack`` closes: its port and the
    seconds from the start until it printed its address. Its children are recorded in
    STARTED, by the names it logs, for the CPU figures."""
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "arena.devserver"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)

    def stop() -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    stack.callback(stop)
    log = Path(env["ARENA_VAR_DIR"]) / "run.log"
    with log.open("wb") as out:
        while time.monotonic() - started < timeout:
            line = process.stdout.readline()
            if not line:
                out.flush()
                raise SystemExit("the run command exited:\n" + log.read_text()[-3000:])
            out.write(line)
            if found := STARTED_CHILD.search(line):
                STARTED[found.group(1).decode()] = _Pid(int(found.group(2)))
            if found := RUNNING_AT.search(line):
                announced = time.monotonic() - started
                # Its output goes on being read, or the pipe fills and the arena blocks.
                threading.Thread(target=_copy, args=(process.stdout, log), daemon=True).start()
                return int(found.group(1)), announced
    raise SystemExit(f"the run command printed no address within {timeout:.0f} s: see {log}")


class _Pid:
    """What :func:`cpu_seconds` needs of a process the run command started."""

    def __init__(self, pid: int) -> None:
        self.pid = pid


def _copy(stream, path: Path) -> None:
    with path.open("ab") as out:
        for line in stream:
            out.write(line)


def stop_process(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()



def migrated_stack(stack: contextlib.ExitStack, info: dict) -> None:
    """Set Django up on the throwaway stack: Redis started (embedded) and the schema migrated;
    everything is undone when ``stack`` closes."""
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from arena.celery import app
    from arena.embedded_redis import start_embedded_redis, stop_embedded_redis

    stack.callback(shutil.rmtree, info["var_dir"], ignore_errors=True)
    stack.callback(drop_database, info)
    if settings.EMBEDDED_REDIS:
        socket_path = Path(settings.EMBEDDED_REDIS_SOCKET)
        redis_process = start_embedded_redis(socket_path)
        stack.callback(stop_embedded_redis, redis_process, socket_path)
    call_command("migrate", verbosity=0, interactive=False)
    app.conf.task_always_eager = False
    close_database_connections()


def cpu_seconds() -> dict[str, float]:
    """CPU time (user + system) used so far by each started process and by this one, and by
    a PostgreSQL server running on this host (every one of its processes, and the ended
    connections its postmaster collected)."""
    tick = os.sysconf("SC_CLK_TCK")

    def used(pid: int | str, *, children: bool = False) -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        # utime, stime (and cutime, cstime: its children that ended)
        return sum(int(f) for f in fields[11:15 if children else 13]) / tick

    seconds = {"this process (clients, provider)": used("self"),
               **{role: used(process.pid) for role, process in STARTED.items()}}
    postgres = [pid for pid in os.listdir("/proc") if pid.isdigit()
                and _read(f"/proc/{pid}/comm") == "postgres"]
    if postgres:
        times = [used(pid, children=True) for pid in postgres]
        seconds["PostgreSQL server"] = sum(t for t in times if not math.isnan(t))
    return seconds


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def cpu_report(before: dict[str, float], after: dict[str, float]) -> str:
    """'role 1.23 s, ...' of the CPU each process used between two :func:`cpu_seconds`."""
    return ", ".join(f"{role} {after[role] - before[role]:.2f} s" for role in after
                     if role in before)


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (1..99) of ``values``; NaN for none."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[int(q) - 1]


def host_speed() -> str:
    """How fast this host runs Python, to compare figures taken on different hosts: the time
    of a fixed pure-Python loop (ten million additions), best of three. The load mix has
    measured a third of one session's rates on another session's host, same code."""
    best = math.inf
    for _ in range(3):
        started = time.process_time()
        total = 0
        for number in range(10_000_000):
            total += number
        best = min(best, time.process_time() - started)
    return f"{os.cpu_count()} cores; ten million Python additions take {best:.2f} s"


def describe(info: dict) -> str:
    from django.conf import settings

    database = (f"PostgreSQL (throwaway database {info['pg_database']})"
                if info["pg_database"] else "SQLite (throwaway)")
    redis = "embedded Redis" if settings.EMBEDDED_REDIS else "the Redis at REDIS_URL"
    return f"{database}, {redis}"

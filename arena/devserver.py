"""The run command's supervisor: everything the arena needs, in one terminal.

``python -m arena.devserver`` starts the embedded Redis (unless ``REDIS_URL``), migrates,
loads the fixtures, then starts at once daphne on 127.0.0.1:$PORT (8000), the local models
(unless ``ARENA_LOCAL_MODELS=0``), the Celery workers and beat, and says where the arena is
once it is ready: the web answers and has warmed up, a worker beats and the local models
have settled (:class:`ReadyWatch`; the log says when each part got ready). A process that
crashes is started again with backoff (and the log says so); the rest keep running. Ctrl-C
(or SIGTERM) stops every process it started, in reverse order, leaving none behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import django
from django.conf import settings
from django.core.management import call_command
from django.db import connections

from arena import metrics
from arena.embedded_redis import start_embedded_redis
from arena.env_file import load_env_file
from arena.local_models.serving import STOP_TIMEOUT as MODELS_STOP_TIMEOUT
from arena.local_models.specs import clear_instance
from arena.readiness import answered, local_models_state, web_is_warm, workers_alive
from arena.webserver import daphne_shared_command, web_answers, web_socket, worker_command

logger = logging.getLogger("arena.devserver")
ROOT = Path(__file__).resolve().parent.parent


STOP_GRACE_SECONDS = 10.0
# A process that dies is started again after 1 s, then 2, 4, ... up to a minute; one that
# ran for RESTART_RESET_SECONDS before dying counts as healthy again (1 s next time).
RESTART_FIRST_DELAY = 1.0
RESTART_MAX_DELAY = 60.0
RESTART_RESET_SECONDS = 60.0
# The address waits this long at most for the workers and the local models (a model that
# never loads must not keep the arena from being used).
READY_PATIENCE_SECONDS = 180.0


@dataclass
class Child:
    name: str
    start: Callable[[], subprocess.Popen]
    process: subprocess.Popen
    grace: float
    started_at: float = field(default_factory=time.monotonic)
    failures: int = 0  # deaths in a row, each after less than RESTART_RESET_SECONDS
    restart_at: float | None = None
    on_exit: Callable[[subprocess.Popen], None] | None = None


class Supervisor:
    """Starts the arena's processes, restarts one that dies (with backoff, saying so), and
    stops them all in reverse order."""

    def __init__(self, *, first_delay: float = RESTART_FIRST_DELAY,
                 max_delay: float = RESTART_MAX_DELAY) -> None:
        self.children: list[Child] = []
        self.stopping = False
        self.first_delay, self.max_delay = first_delay, max_delay

    def spawn(self, name: str, command: list[str], *, grace: float = STOP_GRACE_SECONDS,
              on_exit: Callable[[subprocess.Popen], None] | None = None,
              pass_fds: tuple[int, ...] = ()) -> subprocess.Popen:
        """Start ``command``; started again whenever it dies. ``on_exit`` cleans up after a
        dead process before its successor starts; ``pass_fds``: descriptors it inherits."""
        def start() -> subprocess.Popen:
            return subprocess.Popen(command, cwd=ROOT, start_new_session=True,
                                    pass_fds=pass_fds)

        return self.adopt(name, start, grace=grace, on_exit=on_exit)

    def adopt(self, name: str, start: Callable[[], subprocess.Popen | None], *,
              grace: float = STOP_GRACE_SECONDS,
              on_exit: Callable[[subprocess.Popen], None] | None = None):
        """Run ``start()`` now and whenever its process dies (None: nothing to watch)."""
        process = start()
        if process is not None:
            self.children.append(Child(name, start, process, grace, on_exit=on_exit))
            logger.info("started %s (pid %d)", name, process.pid)
        return process

    def stop_all(self) -> None:
        """Stop in reverse start order, each before the next, so the worker can finish
        with Redis still up; a process that outlasts its grace (10 s unless spawned with
        another) is killed."""
        self.stopping = True
        for child in reversed(self.children):
            process = child.process
            if process.poll() is not None:
                continue
            logger.info("stopping %s", child.name)
            _signal_group(process, signal.SIGTERM)
            try:
                process.wait(timeout=child.grace)
            except subprocess.TimeoutExpired:
                logger.warning("%s did not stop in time; killing it", child.name)
                _signal_group(process, signal.SIGKILL)
                process.wait()

    def check(self, now: float | None = None) -> None:
        """Notice the children that died and start again those whose delay has passed."""
        now = time.monotonic() if now is None else now
        for child in self.children:
            if child.restart_at is None:
                code = child.process.poll()
                if code is None:
                    continue
                if child.on_exit is not None:
                    child.on_exit(child.process)
                ran = now - child.started_at
                child.failures = 1 if ran >= RESTART_RESET_SECONDS else child.failures + 1
                delay = self._delay(child, now)
                logger.error("%s exited with code %s after %.0f s; starting it again in %.0f s "
                             "(the rest of the arena keeps running)", child.name, code, ran,
                             delay)
            elif now >= child.restart_at:
                try:
                    process = child.start()
                except Exception as exc:  # e.g. Redis that does not come up: try again later
                    child.failures += 1
                    logger.error("%s could not be started again (%s); next try in %.0f s",
                                 child.name, exc, self._delay(child, now))
                    continue
                if process is None:  # something else serves it now: look again later
                    child.restart_at = now + self.max_delay
                    continue
                child.process, child.started_at, child.restart_at = process, now, None
                logger.info("started %s again (pid %d, restart %d in a row)", child.name,
                            process.pid, child.failures)

    def _delay(self, child: Child, now: float) -> float:
        delay = min(self.max_delay, self.first_delay * 2 ** (child.failures - 1))
        child.restart_at = now + delay
        return delay

    def watch(self) -> int:
        """Keep the children running until we are asked to stop."""
        self.wait_until(lambda: False)
        return 0

    def wait_until(self, ready: Callable[[], bool]) -> bool:
        """Keep the children running until ``ready()``: True then, False if we are asked to
        stop first."""
        while not self.stopping:
            self.check()
            if ready():
                return True
            time.sleep(0.5)
        return False


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def _lock_var_dir(var_dir: Path):
    """Hold an exclusive lock on the var folder for as long as this arena runs (its SQLite
    file, Redis socket and model record are this arena's alone); None if another holds it."""
    handle = (var_dir / "arena.lock").open("w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def _web_socket(port: str | None) -> socket.socket:
    """The web port: $PORT, else 8000, else a free one when 8000 is taken (a second arena on
    this machine)."""
    if port:
        return web_socket("127.0.0.1", int(port))
    try:
        return web_socket("127.0.0.1", 8000)
    except OSError:
        return web_socket("127.0.0.1", 0)


class ReadyWatch:
    """Whether the arena is ready (:func:`wait_until`'s test): the web answers, a worker
    beats, the local models have settled. Logs each part as it gets ready, with the seconds
    since the watch began; past ``patience`` seconds it gives up waiting on the workers and
    the local models, and the address comes with what is still starting."""

    def __init__(self, port: int, web_pids: Callable[[], list[int]],
                 patience: float = READY_PATIENCE_SECONDS) -> None:
        self.port, self.patience = port, patience
        self.began = time.monotonic()
        self.ready_after: dict[str, float] = {}
        self.parts: dict[str, Callable[[], bool]] = {
            "the web": lambda: web_answers(port),
            "a worker": lambda: answered(workers_alive),
            # Each daphne loads what the offline voice agent's calls need once it serves
            # (arena.webserver.warm_up_once_serving): the first caller waits for none of it.
            "the web's warm-up": lambda: answered(
                lambda: (pids := web_pids()) and all(web_is_warm(pid) for pid in pids)),
        }
        if settings.ARENA_LOCAL_MODELS:
            self.parts["the local models"] = lambda: local_models_state() != "starting"

    def ready(self) -> bool:
        elapsed = time.monotonic() - self.began
        for name, check in self.parts.items():
            if name not in self.ready_after and check():
                self.ready_after[name] = elapsed
                logger.info("%s ready after %.1f s", name, elapsed)
        if len(self.ready_after) == len(self.parts):
            # The first battle draws from the models that answer now: probed here, cached
            # for every process, so that it does not wait for the probes.
            from arena.selectors import model_list_available  # noqa: PLC0415 - after setup

            available = len(model_list_available())
            if available < 2:
                logger.warning("%d model(s) answer: a battle needs two (python manage.py "
                               "validate_models --ping says why each one does not)", available)
            return True
        # The address is no use before the web answers; past patience it comes without the
        # rest, which /healthz/ready and the log go on naming.
        return "the web" in self.ready_after and elapsed > self.patience

    def summary(self) -> str:
        waiting = [name for name in self.parts if name not in self.ready_after]
        if waiting:
            return (f"; still starting after {self.patience:.0f} s: {', '.join(waiting)} "
                    "(a battle sent meanwhile waits for them; see /healthz/ready)")
        return f"; ready in {max(self.ready_after.values()):.1f} s"


def _prepare_database() -> None:
    """Migrate and load the fixtures in this process, which has Django set up already (a
    ``manage.py`` process for each took a start of Django twice: about 15 s here)."""
    try:
        call_command("migrate", interactive=False, verbosity=0)
        call_command("seed")
    finally:
        connections.close_all()  # the children open their own


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    from_file = load_env_file()  # before the settings read the environment
    django.setup()
    # What the run command says (where the arena runs, what it starts and stops) is shown
    # whatever LOG_LEVEL quietens elsewhere.
    logger.setLevel(logging.INFO)
    if from_file:
        logger.info("read %s from .env", ", ".join(from_file))

    lock = _lock_var_dir(Path(settings.VAR_DIR))
    if lock is None:
        logger.error("another arena is running from %s; to run a second one beside it, give it "
                     "a folder of its own: ARENA_VAR_DIR=/some/dir python3 dev.py run",
                     settings.VAR_DIR)
        return 2
    try:
        listener = _web_socket(os.environ.get("PORT"))
    except OSError as exc:
        logger.error("cannot listen on port %s (%s): choose another with PORT=...",
                     os.environ.get("PORT"), exc.strerror)
        return 2
    port = listener.getsockname()[1]
    metrics.start_afresh()  # this run's processes count from zero (arena.metrics)
    supervisor = Supervisor()

    def request_stop(signum, frame):  # noqa: ARG001
        supervisor.stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    code = 1
    try:
        if settings.EMBEDDED_REDIS:
            supervisor.adopt("redis", lambda: start_embedded_redis(settings.EMBEDDED_REDIS_SOCKET))
        _prepare_database()
        # Everything at once: the address waits for all of it anyway, and the processes
        # load Python and the models side by side (the log says when each is ready).
        for index in range(settings.ARENA_WEB_PROCESSES):
            supervisor.spawn(f"daphne {index + 1}", daphne_shared_command(listener),
                             pass_fds=(listener.fileno(),),
                             on_exit=lambda dead: metrics.process_gone(dead.pid))
        if settings.ARENA_LOCAL_MODELS:
            # Its model servers are stopped together and each may take STOP_TIMEOUT
            # (LocalModelFleet.stop) before it is killed; the fleet needs a little more.
            supervisor.spawn(
                "local models", [sys.executable, "-m", "arena.local_models", "serve"],
                grace=MODELS_STOP_TIMEOUT + 10, on_exit=lambda dead: clear_instance(dead.pid))
        celery = [sys.executable, "-m", "celery", "-A", "arena"]
        for index in range(settings.CELERY_WORKER_PROCESSES):
            supervisor.spawn(f"celery worker {index + 1}", worker_command(index))
        supervisor.spawn(
            "celery beat",
            [*celery, "beat", "--loglevel", "INFO",
             "--schedule", str(Path(settings.VAR_DIR) / "celerybeat-schedule")],
        )
        watch = ReadyWatch(port, web_pids=lambda: [
            child.process.pid for child in supervisor.children
            if child.name.startswith("daphne") and child.process.poll() is None])
        if not supervisor.wait_until(watch.ready):
            return 0  # asked to stop meanwhile
        logger.info("The arena is running at http://127.0.0.1:%s/ (Ctrl-C stops everything)%s",
                    port, watch.summary())
        code = supervisor.watch()
    except Exception as exc:
        logger.error("could not start the arena: %s", exc)
    finally:
        supervisor.stop_all()
        for child in supervisor.children:
            if child.name == "local models":  # killed before it could remove its record
                clear_instance(child.process.pid)
        if settings.EMBEDDED_REDIS:
            Path(settings.EMBEDDED_REDIS_SOCKET).unlink(missing_ok=True)
        logger.info("stopped")
    return code


if __name__ == "__main__":
    sys.exit(main())

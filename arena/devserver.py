"""The run command's supervisor: everything the arena needs, in one terminal.

``python -m arena.devserver`` migrates, loads the fixtures, starts the embedded
Redis (unless ``REDIS_URL``), the local models (unless ``ARENA_LOCAL_MODELS=0``),
a Celery worker and beat, and daphne on 127.0.0.1:$PORT (8000). Ctrl-C (or
SIGTERM) stops every process it started, in reverse order, leaving none behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena.webserver import daphne_command, worker_command

logger = logging.getLogger("arena.devserver")
ROOT = Path(__file__).resolve().parent.parent


STOP_GRACE_SECONDS = 10.0


class Supervisor:
    def __init__(self) -> None:
        self.children: list[tuple[str, subprocess.Popen]] = []
        self.grace: dict[int, float] = {}  # pid -> seconds it may take to stop
        self.stopping = False

    def spawn(self, name: str, command: list[str], *,
              grace: float = STOP_GRACE_SECONDS) -> subprocess.Popen:
        process = subprocess.Popen(command, cwd=ROOT, start_new_session=True)
        self.children.append((name, process))
        self.grace[process.pid] = grace
        logger.info("started %s (pid %d)", name, process.pid)
        return process

    def adopt(self, name: str, process: subprocess.Popen | None) -> None:
        if process is not None:
            self.children.append((name, process))

    def stop_all(self) -> None:
        """Stop in reverse start order, each before the next, so the worker can finish
        with Redis still up; a process that outlasts its grace (10 s unless spawned with
        another) is killed."""
        self.stopping = True
        for name, process in reversed(self.children):
            if process.poll() is not None:
                continue
            logger.info("stopping %s", name)
            _signal_group(process, signal.SIGTERM)
            try:
                process.wait(timeout=self.grace.get(process.pid, STOP_GRACE_SECONDS))
            except subprocess.TimeoutExpired:
                logger.warning("%s did not stop in time; killing it", name)
                _signal_group(process, signal.SIGKILL)
                process.wait()

    def watch(self) -> int:
        """Wait until a child dies (an error) or we are asked to stop."""
        while not self.stopping:
            for name, process in self.children:
                code = process.poll()
                if code is not None:
                    logger.error("%s exited with code %s; stopping everything", name, code)
                    return 1
            time.sleep(0.5)
        return 0


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def _lock_var_dir(var_dir: Path):
    """Hold an exclusive lock on the var folder for as long as this arena runs (its SQLite
    file, Redis socket and model record are this arena's alone); None if another holds it."""
    import fcntl

    handle = (var_dir / "arena.lock").open("w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def _web_port(preferred: int = 8000) -> str:
    """8000, or a free port when 8000 is taken (a second arena on this machine)."""
    from arena.local_models.serving import free_port, port_is_free

    return str(preferred if port_is_free(preferred) else free_port())


def _manage(*args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, check=True)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    import django

    django.setup()
    # What the run command says (where the arena runs, what it starts and stops) is shown
    # whatever LOG_LEVEL quietens elsewhere.
    logger.setLevel(logging.INFO)
    from django.conf import settings

    from arena.embedded_redis import start_embedded_redis
    from arena.local_models.serving import STOP_TIMEOUT as MODELS_STOP_TIMEOUT
    from arena.local_models.specs import clear_instance

    lock = _lock_var_dir(Path(settings.VAR_DIR))
    if lock is None:
        logger.error("another arena is running from %s; to run a second one beside it, give it "
                     "a folder of its own: ARENA_VAR_DIR=/some/dir python3 dev.py run",
                     settings.VAR_DIR)
        return 2
    port = os.environ.get("PORT") or _web_port()
    supervisor = Supervisor()

    def request_stop(signum, frame):  # noqa: ARG001
        supervisor.stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    code = 1
    models = None
    try:
        if settings.EMBEDDED_REDIS:
            supervisor.adopt("redis", start_embedded_redis(settings.EMBEDDED_REDIS_SOCKET))
        _manage("migrate", "--noinput", "-v", "0")
        _manage("seed")
        if settings.ARENA_LOCAL_MODELS:
            # Its model servers are stopped together and each may take STOP_TIMEOUT
            # (LocalModelFleet.stop) before it is killed; the fleet needs a little more.
            models = supervisor.spawn(
                "local models", [sys.executable, "-m", "arena.local_models", "serve"],
                grace=MODELS_STOP_TIMEOUT + 10)
        celery = [sys.executable, "-m", "celery", "-A", "arena"]
        for index in range(settings.CELERY_WORKER_PROCESSES):
            supervisor.spawn(f"celery worker {index + 1}", worker_command(index))
        supervisor.spawn(
            "celery beat",
            [*celery, "beat", "--loglevel", "INFO",
             "--schedule", str(Path(settings.VAR_DIR) / "celerybeat-schedule")],
        )
        supervisor.spawn(
            "daphne",
            daphne_command("127.0.0.1", port),
        )
        logger.info("The arena is running at http://127.0.0.1:%s/ (Ctrl-C stops everything)", port)
        code = supervisor.watch()
    except subprocess.CalledProcessError as exc:
        logger.error("setup step failed: %s", " ".join(map(str, exc.cmd[1:])))
    except Exception as exc:
        logger.error("could not start the arena: %s", exc)
    finally:
        supervisor.stop_all()
        if models is not None:  # killed before it could remove its record: remove it here
            clear_instance(models.pid)
        if settings.EMBEDDED_REDIS:
            Path(settings.EMBEDDED_REDIS_SOCKET).unlink(missing_ok=True)
        logger.info("stopped")
    return code


if __name__ == "__main__":
    sys.exit(main())

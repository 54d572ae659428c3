"""Serving the local models: one xllamacpp (llama.cpp) server per model, each in its own process.

Why a process per model: llama.cpp keeps process-wide state (backend init and
free, log settings), a native abort in one model must not take the other down,
and a process can always be stopped (SIGTERM, then SIGKILL), while a stuck
native thread cannot. The cost is one Python interpreter (~50 MB) per model.

``serve()`` is the ``python -m arena.local_models serve`` command: it prepares
the files, starts a worker per available model, logs one line per model, and
stays up until SIGINT/SIGTERM even when no model could start (the run command
treats an exiting child as a failure). Workers also stop when their parent dies.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from arena.local_models.files import local_model_status, prepare_local_models
from arena.local_models.specs import (
    HOST,
    LOCAL_MODELS,
    REPO_ROOT,
    LocalModelSpec,
    alias_for,
    base_url_for,
    clear_instance,
    configured_port,
    get_spec,
    log_dir,
    port_for,
    threads_for,
    write_instance,
)

logger = logging.getLogger(__name__)

FAILED = "FAILED: "  # a worker's last words, read back by its parent
LLAMA_VERBOSITY = 1  # llama.cpp: errors only (0 silences even those, 3 logs every request)
MAX_RESTARTS = 3
# How long a model server may take to stop before it is killed. llama.cpp joins its threads
# on the way out, which took over 10 s on a busy 2-core machine (CI); a clean stop is worth it.
STOP_TIMEOUT = 20.0


def probe(base_url: str, timeout: float = 1.0) -> bool:
    """Whether the server at ``base_url`` (``.../v1``) has its model loaded."""
    try:
        with httpx.Client(timeout=timeout) as client:
            response = client.get(f"{base_url}/health")
            if response.status_code == 404:
                response = client.get(f"{base_url}/models")
            return response.status_code == 200
    except httpx.HTTPError:
        return False


def wait_until_ready(
    base_url: str,
    timeout: float = 60.0,
    *,
    alive: Callable[[], bool] | None = None,
    interval: float = 0.2,
) -> bool:
    """Poll the health endpoint until it answers 200, ``alive()`` turns false, or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if probe(base_url, timeout=min(2.0, max(0.2, deadline - time.monotonic()))):
            return True
        if (alive is not None and not alive()) or time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def port_is_free(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # Like llama.cpp's HTTP server: connections of a dead server in TIME_WAIT do not count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = HOST) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def build_params(spec: LocalModelSpec, model_path: Path, port: int,
                 token: str | None = None):  # -> xllamacpp.CommonParams
    import xllamacpp  # noqa: PLC0415 - llama.cpp: the model server's only

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.model_alias = {alias_for(spec, token)}
    params.hostnames = [HOST]
    params.port = port
    threads = threads_for(spec)
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_parallel = spec.n_parallel
    params.n_ctx = spec.n_ctx  # split evenly: each slot gets ctx_per_slot tokens
    params.n_predict = spec.default_max_tokens  # only a default; clients must send max_tokens
    params.sampling.dry_multiplier = spec.dry_multiplier
    params.cache_ram_mib = 0  # no host-RAM prompt cache across slots (default is 8 GiB)
    params.ui = False
    params.verbosity = LLAMA_VERBOSITY
    return params


def run_worker(key: str, port: int | None = None, token: str | None = None) -> int:
    """Body of a worker process: serve one model until SIGINT/SIGTERM or the parent goes away."""
    spec = get_spec(key)
    port = port or port_for(spec)
    status = local_model_status(spec)
    if not status.available or status.path is None:
        logger.error("%s%s", FAILED, status.reason)
        return 2
    if not port_is_free(port):
        logger.error("%sport %d on %s is already in use", FAILED, port, HOST)
        return 3
    stop = threading.Event()

    def request_stop(signum: int, frame: object) -> None:  # noqa: ARG001
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, request_stop)
    parent = os.getppid()
    started = time.monotonic()
    try:
        import xllamacpp  # noqa: PLC0415 - llama.cpp: the model server's only

        server = xllamacpp.Server(build_params(spec, status.path, port, token))
    except Exception as exc:
        logger.error("%sllama.cpp could not start the server: %s", FAILED, exc)
        return 4
    for sig in (signal.SIGINT, signal.SIGTERM):  # in case the native side took them over
        signal.signal(sig, request_stop)
    logger.info(
        "%s loaded in %.1f s, listening on %s",
        spec.key,
        time.monotonic() - started,
        base_url_for(spec, port),
    )
    while not stop.wait(1.0):
        if os.getppid() != parent:
            logger.warning("%s: parent process went away; stopping", spec.key)
            break
    del server  # terminates llama.cpp's loop and joins its threads
    logger.info("%s stopped", spec.key)
    return 0


class LocalModelProcess:
    """One model served by a child process (``python -m arena.local_models worker KEY``)."""

    def __init__(
        self,
        key_or_spec: str | LocalModelSpec,
        port: int | None = None,
        log_file: Path | None = None,
        token: str | None = None,
    ) -> None:
        self.spec = get_spec(key_or_spec)
        self.port = port or port_for(self.spec)
        self.token = token
        self.base_url = base_url_for(self.spec, self.port)
        self.log_file = log_file or log_dir() / f"local-model-{self.spec.key}.log"
        self.process: subprocess.Popen | None = None
        self.load_seconds: float | None = None
        self._log_offset = 0
        self._started = 0.0

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        command = [
            sys.executable,
            "-m",
            "arena.local_models",
            "worker",
            self.spec.key,
            "--port",
            str(self.port),
            *(["--token", self.token] if self.token else []),
        ]
        with self.log_file.open("ab") as log:
            self._log_offset = log.tell()
            self.process = subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._started = time.monotonic()

    def wait_ready(self, timeout: float = 120.0, stop: threading.Event | None = None) -> bool:
        def alive() -> bool:
            return self.alive and not (stop is not None and stop.is_set())

        ready = wait_until_ready(self.base_url, timeout, alive=alive)
        if ready:
            self.load_seconds = time.monotonic() - self._started
        return ready

    def failure_reason(self) -> str:
        """The worker's own last words, or its exit code."""
        try:
            with self.log_file.open("rb") as log:
                log.seek(self._log_offset)
                text = log.read().decode("utf-8", "replace")
        except OSError:
            text = ""
        reasons = [line.split(FAILED, 1)[1] for line in text.splitlines() if FAILED in line]
        if reasons:
            return reasons[-1].strip()
        code = self.process.poll() if self.process else None
        if code is None:
            return f"not ready in time (see {self.log_file})"
        return f"worker exited with code {code} (see {self.log_file})"

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                logger.warning("%s did not stop in %.0f s; killing it", self.spec.key, timeout)
                self.process.kill()
                self.process.wait()


class LocalModelFleet:
    """Prepare and serve several local models; a context manager that always stops them."""

    def __init__(self, keys: Sequence[str] | None = None, ports: dict[str, int] | None = None,
                 token: str | None = None):
        self.keys = list(keys or LOCAL_MODELS)
        self.ports = ports or {}
        self.token = token
        self.running: dict[str, LocalModelProcess] = {}
        self.unavailable: dict[str, str] = {}
        self.restarts: dict[str, int] = {}
        self._spawned: list[LocalModelProcess] = []  # every worker ever started, for stop()

    def start(self, ready_timeout: float = 120.0, stop: threading.Event | None = None) -> None:
        """Prepare the files, start every available model at once, then wait for each."""
        pending = []
        for key, status in prepare_local_models(self.keys).items():
            if stop is not None and stop.is_set():
                break
            if status.available:
                pending.append(self._spawn(LocalModelProcess(key, self.ports.get(key),
                                                             token=self.token)))
            else:
                self._unavailable(key, status.reason)
        for worker in pending:
            self._await(worker, ready_timeout, stop)

    def _spawn(self, worker: LocalModelProcess) -> LocalModelProcess:
        self._spawned.append(worker)
        worker.start()
        return worker

    def _await(
        self, worker: LocalModelProcess, ready_timeout: float, stop: threading.Event | None = None
    ) -> bool:
        if worker.wait_ready(ready_timeout, stop):
            self.running[worker.spec.key] = worker
            spec = worker.spec
            logger.info(
                "%s: ready at %s (%.1f s; %d thread(s), %d slots x %d tokens)",
                spec.key,
                worker.base_url,
                worker.load_seconds or 0.0,
                threads_for(spec),
                spec.n_parallel,
                spec.ctx_per_slot,
            )
            return True
        if stop is not None and stop.is_set():
            worker.stop()
            return False
        reason = worker.failure_reason()
        worker.stop()
        self._unavailable(worker.spec.key, reason)
        return False

    def _unavailable(self, key: str, reason: str) -> None:
        self.unavailable[key] = reason
        self.running.pop(key, None)
        logger.warning("%s: unavailable: %s", key, reason)

    def check(self, ready_timeout: float = 120.0, stop: threading.Event | None = None) -> None:
        """Restart (a few times) a worker that died on its own."""
        for key, worker in list(self.running.items()):
            if worker.alive:
                continue
            logger.error("%s: worker died: %s", key, worker.failure_reason())
            self.restarts[key] = self.restarts.get(key, 0) + 1
            if self.restarts[key] > MAX_RESTARTS:
                self._unavailable(key, f"worker died {MAX_RESTARTS + 1} times; giving up")
                continue
            logger.info("%s: restarting (attempt %d)", key, self.restarts[key])
            del self.running[key]
            time.sleep(1.0)
            replacement = LocalModelProcess(key, worker.port, worker.log_file, worker.token)
            self._await(self._spawn(replacement), ready_timeout, stop)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop every worker this fleet started: SIGTERM to all, then wait (SIGKILL if stuck)."""
        workers, self._spawned = self._spawned, []
        for worker in workers:
            if worker.alive and worker.process is not None:
                worker.process.terminate()
        for worker in workers:
            worker.stop(timeout)
        self.running.clear()

    def __enter__(self) -> LocalModelFleet:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve(keys: Sequence[str] | None = None, *, stop: threading.Event | None = None) -> int:
    """Serve the local models until SIGINT/SIGTERM (or ``stop`` is set)."""
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda signum, frame: stop.set())
    keys = list(keys or LOCAL_MODELS)
    # Ports are chosen free (unless set), so a second arena or a test run on this machine
    # never collides with this one; the record tells this arena's processes where they are,
    # and the token in each server's model name tells them the server is theirs.
    ports = {key: configured_port(key) or free_port() for key in keys}
    token = secrets.token_hex(8)
    write_instance({"pid": os.getpid(), "token": token, "ports": ports})
    fleet = LocalModelFleet(keys, ports=ports, token=token)
    try:
        fleet.start(stop=stop)
        # Every model is ready or given up on: the arena may say it is ready.
        write_instance({"pid": os.getpid(), "token": token, "ports": ports, "settled": True})
        if not fleet.running and not stop.is_set():
            logger.warning("no local model is being served; idling until stopped")
        while not stop.wait(1.0):
            fleet.check(stop=stop)
    finally:
        fleet.stop()
        clear_instance(os.getpid())
        logger.info("local models stopped")
    return 0

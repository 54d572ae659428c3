"""The run command keeps the arena up: a process that crashes is started again with
backoff, saying so, while the others keep running; Ctrl-C still stops them all."""

from __future__ import annotations

import subprocess
import sys

from arena.devserver import RESTART_RESET_SECONDS, Supervisor
from testkit.waiting import wait_for

CRASH = [sys.executable, "-c", "raise SystemExit(3)"]
SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]


def test_a_crash_is_restarted_with_growing_delays_and_a_healthy_run_resets_them(caplog):
    supervisor = Supervisor(first_delay=1.0, max_delay=8.0)
    try:
        first = supervisor.spawn("worker", CRASH)
        child = supervisor.children[0]
        delays, now = [], 0.0
        child.started_at = now
        for _ in range(5):
            child.process.wait()
            now += 0.1
            supervisor.check(now)
            delays.append(round(child.restart_at - now, 3))
            supervisor.check(child.restart_at - 0.01)  # not yet
            assert child.restart_at is not None
            now = child.restart_at
            supervisor.check(now)  # started again
            assert child.restart_at is None and child.started_at == now
        assert delays == [1.0, 2.0, 4.0, 8.0, 8.0]  # doubling, capped
        assert child.process.pid != first.pid
        # A run longer than RESTART_RESET_SECONDS counts as healthy: back to the first delay.
        child.process.wait()
        now += RESTART_RESET_SECONDS + 1
        supervisor.check(now)
        assert child.restart_at - now == 1.0
    finally:
        supervisor.stop_all()
    assert "worker exited with code 3" in caplog.text
    assert "started worker again" in caplog.text
    assert "the rest of the arena keeps running" in caplog.text


def test_the_others_keep_running_while_one_is_restarted():
    supervisor = Supervisor(first_delay=0.01, max_delay=0.01)
    try:
        steady = supervisor.spawn("daphne", SLEEP)
        supervisor.spawn("beat", CRASH)
        beat = supervisor.children[1]
        first_beat = beat.process.pid

        def restarted() -> bool:
            supervisor.check()
            return beat.process.pid != first_beat

        wait_for(restarted, what="the crashed process to be started again")
        assert steady.poll() is None and supervisor.children[0].process is steady
    finally:
        supervisor.stop_all()
    assert all(child.process.poll() is not None for child in supervisor.children)


def test_a_start_that_fails_is_tried_again_later(caplog):
    attempts = []

    def start():
        attempts.append(1)
        if len(attempts) == 2:
            raise RuntimeError("redis-server did not answer")
        return subprocess.Popen(CRASH)

    supervisor = Supervisor(first_delay=1.0, max_delay=60.0)
    try:
        supervisor.adopt("redis", start)
        child = supervisor.children[0]
        child.started_at = 0.0
        child.process.wait()
        supervisor.check(0.5)           # died: retry at 1.5
        supervisor.check(1.5)           # the start fails: retry after a longer delay
        assert child.restart_at == 1.5 + 2.0
        supervisor.check(3.5)           # the third start works
        assert len(attempts) == 3 and child.restart_at is None
    finally:
        supervisor.stop_all()
    assert "redis could not be started again (redis-server did not answer)" in caplog.text


def test_waiting_for_the_web_side_keeps_restarting_the_others_and_ends_when_it_answers():
    """The run command prints the address once daphne answers; meanwhile a crash is still
    restarted, and a stop request ends the wait."""
    supervisor = Supervisor(first_delay=0.01, max_delay=0.01)
    try:
        supervisor.spawn("beat", CRASH)
        beat = supervisor.children[0]
        first_beat = beat.process.pid
        assert supervisor.wait_until(lambda: beat.process.pid != first_beat)
        supervisor.stopping = True
        assert supervisor.wait_until(lambda: False) is False
    finally:
        supervisor.stop_all()


def test_a_port_answers_only_once_a_server_serves_it():
    """The run command's port is listened on before daphne starts: connections wait in its
    queue, unanswered, and do not count as the arena being up."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from arena.webserver import web_answers, web_socket

    listener = web_socket("127.0.0.1", 0)
    port = listener.getsockname()[1]
    try:
        assert web_answers(port, timeout=0.2) is False  # queued, never answered
    finally:
        listener.close()
    assert web_answers(port, timeout=0.2) is False  # nothing listens

    class Health(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Health)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        assert web_answers(server.server_address[1]) is True
    finally:
        server.shutdown()
        thread.join()
        server.server_close()

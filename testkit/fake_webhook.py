"""A webhook receiver standing in for Slack's incoming webhooks: real HTTP on a free local
port, recording every JSON body POSTed to it, answering ``status`` (200, Slack's "ok"; set
500 to play a receiver that fails). With ``hold`` set it answers nothing until
``release()`` (a receiver that hangs: the sender's timeout is what ends the request)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler

from testkit.local_http import LocalHTTPService


class FakeWebhook(LocalHTTPService):
    def __init__(self) -> None:
        self.status = 200
        self.hold = False
        self._released = threading.Event()
        self.bodies: list[dict] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"{self.base_url}/services/T000/B000/secret-part"

    def release(self) -> None:
        self._released.set()

    def stop(self) -> None:
        self.release()  # a held request ends with the server
        super().stop()

    @property
    def texts(self) -> list[str]:
        with self._lock:
            return [body.get("text", "") for body in self.bodies]

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        if method == "POST":
            body = json.loads(h.rfile.read(int(h.headers.get("Content-Length") or 0)))
            with self._lock:
                self.bodies.append(body)
            if self.hold:
                self._released.wait(60)
        answer = b"ok" if self.status < 400 else b"internal_error"
        h.send_response(self.status)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(len(answer)))
        h.end_headers()
        h.wfile.write(answer)

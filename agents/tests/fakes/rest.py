"""The REST half of a fake provider: a stdlib HTTP server on 127.0.0.1 in a daemon thread
that checks the bearer key, routes ``(method, path pattern)`` to handlers and records every
request. ``fail(path_part, status)`` makes the next request whose path holds ``path_part``
answer ``status`` (a 5xx, a 4xx) or ``"junk"`` (a 200 whose body is not JSON)."""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from testkit.local_http import LocalHTTPService

Handler = Callable[[dict, re.Match], tuple[int, Any]]


class FakeREST(LocalHTTPService):
    name = "fake"

    def __init__(self) -> None:
        self.api_key = f"sk-{self.name}-{secrets.token_hex(16)}"
        self.requests: list[dict[str, Any]] = []
        self.routes: list[tuple[str, re.Pattern, Handler]] = []
        self._failures: list[tuple[str, int | str]] = []
        self._lock = threading.Lock()

    def route(self, method: str, pattern: str, handler: Handler) -> None:
        self.routes.append((method, re.compile(f"^{pattern}$"), handler))

    def fail(self, path_part: str, answer: int | str) -> None:
        with self._lock:
            self._failures.append((path_part, answer))

    def calls_to(self, path_part: str) -> list[dict]:
        return [r for r in self.requests if path_part in r["path"]]

    def authorised(self, headers) -> bool:  # noqa: ANN001
        return headers.get("Authorization") == f"Bearer {self.api_key}"

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        path = h.path.split("?")[0]
        with self._lock:
            self.requests.append({"method": method, "path": path, "headers": dict(h.headers),
                                  "body": body})
            forced = next(((i, a) for i, (part, a) in enumerate(self._failures)
                           if part in path), None)
            if forced is not None:
                del self._failures[forced[0]]
        if not self.authorised(h.headers) and not path.startswith("/fake-livekit/"):
            return self._send(h, 401, {"error": "Invalid API key."})
        if forced is not None:
            if forced[1] == "junk":
                return self._send_raw(h, 200, b"<html>upstream overloaded</html>")
            return self._send(h, forced[1], {"error": f"Forced {forced[1]}."})
        if body is None:
            return self._send(h, 400, {"error": "The body is not JSON."})
        for wanted, pattern, handler in self.routes:
            match = pattern.match(path)
            if wanted == method and match:
                status, answer = handler(body, match)
                return self._send(h, status, answer)
        self._send(h, 404, {"error": f"No route {method} {path}."})

    def _send(self, h: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
        self._send_raw(h, status, json.dumps(payload).encode())

    @staticmethod
    def _send_raw(h: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

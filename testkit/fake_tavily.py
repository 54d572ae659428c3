"""A fake Tavily search server: real local HTTP speaking Tavily's ``POST /search``.

Usage::

    with FakeTavilyServer(corpus=[{"title": ..., "url": ..., "content": ...}]) as tavily:
        backend = TavilySearch(api_key=tavily.api_key, base_url=tavily.base_url)
        tavily.script(429, "junk", "hang")   # the next answers, in order; then normal ones
        tavily.requests                      # [{"headers": {...}, "body": {...}}, ...]

It checks the bearer key (401 otherwise) and the query (400 when missing or empty), ranks
its corpus by the words a document shares with the query, and answers in Tavily's shape
(``query``, ``results`` with ``title``, ``url``, ``content``, ``score``, ``raw_content``,
``response_time``). Errors carry ``{"detail": {"error": "..."}}`` like Tavily's. ``latency``
delays every answer (a slow search, for benchmarks).
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any

from testkit.local_http import LocalHTTPService

ERRORS = {400: "Query is missing or empty.", 401: "Unauthorized: missing or invalid API key.",
          429: "Your request has been blocked due to excessive requests.",
          432: "This request exceeds your plan's set usage limit.",
          433: "This request exceeds the pay-as-you-go limit.", 500: "Internal server error."}
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


class FakeTavilyServer(LocalHTTPService):
    request_queue_size = 256  # a burst of searches is not refused at the door

    def __init__(self, corpus: list[dict[str, str]] | None = None, *, latency: float = 0.0,
                 api_key: str | None = None) -> None:
        self.corpus = list(corpus or [])
        self.latency = latency
        self.api_key = api_key or f"tvly-fake-{secrets.token_hex(12)}"
        self.requests: list[dict[str, Any]] = []
        self._script: deque = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    # -- control -----------------------------------------------------------------------------

    def stop(self) -> None:
        self._stopping.set()  # a "hang" answer ends now
        super().stop()

    def script(self, *answers: int | str) -> None:
        """The next answers, in order: an error status, ``"junk"`` (200 with a body that is
        not JSON) or ``"hang"`` (no answer until the server stops)."""
        self._script.extend(answers)

    # -- serving -----------------------------------------------------------------------------

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        if method != "POST":
            h.send_error(405)
            return
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        with self._lock:
            self.requests.append({"path": h.path, "headers": dict(h.headers), "body": body})
        forced = self._script.popleft() if self._script else None
        if forced == "hang":
            self._stopping.wait()
            return
        if self.latency:
            self._stopping.wait(self.latency)
        if h.path != "/search":
            return self._send(h, 404, {"detail": {"error": "Not found."}})
        if h.headers.get("Authorization") != f"Bearer {self.api_key}":
            return self._error(h, 401)
        if isinstance(forced, int):
            return self._error(h, forced)
        if forced == "junk":
            return self._send_raw(h, 200, b"<html>Service temporarily overloaded</html>")
        if not isinstance(body, dict) or not str(body.get("query") or "").strip():
            return self._error(h, 400)
        self._send(h, 200, self._results(body))

    def _results(self, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        wanted = _words(body["query"])
        scored = []
        for doc in self.corpus:
            shared = len(wanted & _words(doc["title"] + " " + doc["content"]))
            if shared:
                scored.append((shared / max(len(wanted), 1), doc))
        scored.sort(key=lambda pair: -pair[0])
        limit = int(body.get("max_results") or 5)
        return {"query": body["query"], "follow_up_questions": None, "answer": None,
                "images": [],
                "results": [{"title": d["title"], "url": d["url"], "content": d["content"],
                             "score": round(score, 4), "raw_content": None}
                            for score, d in scored[:limit]],
                "response_time": round(time.perf_counter() - started, 4)}

    def _error(self, h: BaseHTTPRequestHandler, status: int) -> None:
        self._send(h, status, {"detail": {"error": ERRORS.get(status, "Error.")}})

    def _send(self, h: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
        self._send_raw(h, status, json.dumps(payload).encode(), "application/json")

    @staticmethod
    def _send_raw(h: BaseHTTPRequestHandler, status: int, data: bytes,
                  content_type: str = "text/html") -> None:
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

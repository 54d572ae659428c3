"""A fake Cloudflare Turnstile ``siteverify``: real local HTTP speaking its API.

``POST /turnstile/v0/siteverify`` with the form fields (or JSON) ``secret``, ``response`` and
optionally ``remoteip``; the answer is JSON ``{"success": bool, "error-codes": [...],
"challenge_ts", "hostname"}``, as Cloudflare documents it. A token in ``good`` passes once
(tokens are single-use: a second time is ``timeout-or-duplicate``); a wrong secret is
``invalid-input-secret``; anything else ``invalid-input-response``.

Usage::

    with FakeTurnstile(secret="s3cret", good={"tok-1"}) as turnstile:
        settings.ARENA_TURNSTILE_VERIFY_URL = turnstile.verify_url
        ...
        turnstile.requests   # [{"secret": ..., "response": ..., "remoteip": ...}, ...]
        turnstile.failing = 500  # scripted fault: every answer is a 500 (0: answer again)
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from testkit.local_http import LocalHTTPService

PATH = "/turnstile/v0/siteverify"


class FakeTurnstile(LocalHTTPService):
    def __init__(self, *, secret: str, good: set[str] | None = None) -> None:
        self.secret = secret
        self.good = set(good or ())
        self.used: set[str] = set()
        self.requests: list[dict[str, str]] = []
        self.failing = 0
        self._lock = threading.Lock()

    @property
    def verify_url(self) -> str:
        return self.base_url + PATH

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        if method != "POST" or h.path != PATH:
            self.send_json(h, 404, {"success": False, "error-codes": ["bad-request"]})
            return
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0)).decode()
        if self.failing:
            self.send_json(h, self.failing, {"error": "scripted failure"})
            return
        if (h.headers.get("Content-Type") or "").startswith("application/json"):
            fields = json.loads(raw or "{}")
        else:
            fields = {k: v[0] for k, v in parse_qs(raw).items()}
        with self._lock:
            self.requests.append(dict(fields))
            self.send_json(h, 200, self._verdict(fields))

    def _verdict(self, fields: dict[str, str]) -> dict[str, Any]:
        if not fields.get("secret"):
            return self._no("missing-input-secret")
        if fields["secret"] != self.secret:
            return self._no("invalid-input-secret")
        token = fields.get("response")
        if not token:
            return self._no("missing-input-response")
        if token in self.used:
            return self._no("timeout-or-duplicate")
        if token not in self.good:
            return self._no("invalid-input-response")
        self.used.add(token)
        return {"success": True, "error-codes": [], "challenge_ts": "2026-11-27T05:00:00.000Z",
                "hostname": "testserver", "action": "", "cdata": ""}

    @staticmethod
    def _no(code: str) -> dict[str, Any]:
        return {"success": False, "error-codes": [code]}


"""A fake OSV vulnerability service: real local HTTP speaking the OSV API that `uv audit`
uses (``POST /v1/querybatch``, then ``GET /v1/vulns/{id}`` for each id it was given).

Usage::

    with FakeOSVServer({("django", "5.2.19"): "PYSEC-0000-1"}) as osv:
        ...  # ARENA_AUDIT_SERVICE_URL=osv.base_url python3 dev.py audit
        osv.queried                     # {("django", "5.2.19"), ...}: what was asked

Every queried (package, version) in ``advisories`` gets that advisory, affecting every version
below 999; everything else has none.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from testkit.local_http import LocalHTTPService


class FakeOSVServer(LocalHTTPService):
    def __init__(self, advisories: dict[tuple[str, str], str]) -> None:
        self.advisories = advisories
        self.queried: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        if method == "POST":
            raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
            self.send_json(h, *self._querybatch(h.path, raw))
        else:
            self.send_json(h, *self._vuln(h.path))

    def _querybatch(self, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        if path != "/v1/querybatch":
            return 404, {"code": 5, "message": "Not Found"}
        try:
            queries = json.loads(raw)["queries"]
            asked = [(q["package"]["name"], q["version"]) for q in queries]
        except (ValueError, KeyError, TypeError):
            return 400, {"code": 3, "message": "Invalid query."}
        with self._lock:
            self.queried.update(asked)
        return 200, {"results": [
            {"vulns": [{"id": self.advisories[key], "modified": "2026-11-01T00:00:00Z"}]}
            if key in self.advisories else {} for key in asked]}

    def _vuln(self, path: str) -> tuple[int, dict[str, Any]]:
        found = [(name, advisory) for (name, _), advisory in self.advisories.items()
                 if path == f"/v1/vulns/{advisory}"]
        if not found:
            return 404, {"code": 5, "message": "Bug not found."}
        name, advisory = found[0]
        return 200, {
            "id": advisory, "modified": "2026-11-01T00:00:00Z",
            "summary": f"A test advisory against {name}", "details": "Seen only in tests.",
            "affected": [{"package": {"ecosystem": "PyPI", "name": name}, "ranges": [
                {"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "999"}]}]}]}


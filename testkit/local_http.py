"""A fake service's life on a free local port: real HTTP, answered by stdlib threads.

A fake subclasses :class:`LocalHTTPService` and answers in ``handle``::

    class FakeThing(LocalHTTPService):
        def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
            ...  # read h.path and h.rfile, answer with h.send_response(...)

    with FakeThing() as thing:
        ...  # thing.base_url is http://127.0.0.1:PORT
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LocalHTTPService:
    # How many connections may wait to be accepted (the stdlib's 5 refuses a burst).
    request_queue_size = 5
    _httpd: ThreadingHTTPServer | None = None

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        raise NotImplementedError

    @staticmethod
    def send_json(h: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
        """Answer ``payload`` as JSON with ``status``."""
        data = json.dumps(payload).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def start(self) -> Self:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                service.handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                service.handle(self, "POST")

        class Server(ThreadingHTTPServer):
            request_queue_size = service.request_queue_size
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

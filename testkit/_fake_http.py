"""Machinery shared by the fake provider servers (see :mod:`testkit.fake_providers`).

Each server is a stdlib ``ThreadingHTTPServer`` on 127.0.0.1 (port 0) running in a daemon thread.

* OpenAI: ``POST /v1/chat/completions`` (plain, or SSE with ``data: {...}`` chunks, a usage-only
  chunk with ``choices: []`` when ``stream_options.include_usage`` is set, then ``data: [DONE]``)
  and ``GET /v1/models``. ``base_url`` is ``http://127.0.0.1:PORT/v1`` (the OpenAI SDK appends
  ``/chat/completions``).
* Anthropic: ``POST /v1/messages`` (plain, or SSE events ``message_start``,
  ``content_block_start``, ``ping``, ``content_block_delta``/``text_delta``,
  ``content_block_stop``, ``message_delta`` with usage, ``message_stop``) and ``GET /v1/models``.
  ``base_url`` is ``http://127.0.0.1:PORT`` (the Anthropic SDK appends ``/v1/messages``).

By default the answer is ``"{model} says: {last user message}"``, split into word tokens (one
stream chunk per token); usage is prompt tokens = words in all messages (system included),
completion tokens = number of chunks. Per-request behaviour is scripted with :class:`Behaviour`
(FIFO queue, then ``server.default``). Every request is logged (:class:`RecordedRequest`).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from arena.llm.types import ModelEndpoint
from testkit._fake_types import Answer, Behaviour, RecordedRequest, content_text, split_tokens
from testkit.waiting import ceiling


class _Stopped(Exception):
    """The server is stopping: abandon the current request."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # Send each stream chunk at once (no Nagle batching), as a streaming server would.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self.server.owner._dispatch(self, "GET")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self.server.owner._dispatch(self, "POST")

    # -- writing helpers ------------------------------------------------------------------------
    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def send_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def abort(self) -> None:
        """Drop the connection without completing the response."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # A provider's API takes a burst of connections at once (socketserver's default queue
    # of 5 drops the rest, and each dropped client waits a second for TCP to try again).
    request_queue_size = 1024
    owner: FakeProviderServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients dropping keep-alive connections (timeouts, closed pools) are normal here.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class FakeProviderServer:
    """Common machinery; use :class:`FakeOpenAIServer` or :class:`FakeAnthropicServer`."""

    kind = ""
    chat_path = ""
    url_suffix = ""
    api_key_env = ""

    def __init__(
        self,
        *,
        default: Behaviour | None = None,
        reply_text: str | Callable[[RecordedRequest], str] | None = None,
        token_delay: float = 0.0,
        first_token_delay: float = 0.0,
        total_time: float | None = None,
        usage: bool = True,
        api_key: str | None = "auto",
        models: list[str] | None = None,
    ) -> None:
        self.default = default or Behaviour.ok()
        self.reply_text = reply_text
        self.token_delay = token_delay
        self.first_token_delay = first_token_delay
        self.total_time = total_time
        self.usage = usage
        # The key the server expects (None: accept any). "auto" makes a random one.
        self.api_key = (
            f"sk-fake-{self.kind}-{secrets.token_hex(12)}" if api_key == "auto" else api_key
        )
        self.models = models or [f"fake-{self.kind}-model"]
        self._queue: deque[Behaviour] = deque()
        self._log: list[RecordedRequest] = []
        self._cond = threading.Condition()
        self._connections: set[socket.socket] = set()
        self._stop = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        # Streams the client closed before the end: (request, tokens it had been sent).
        self.abandoned: list[tuple[RecordedRequest, int]] = []
        self._hold: tuple[int, threading.Event] | None = None
        self.held = 0  # streams waiting at the hold now

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> FakeProviderServer:
        self._stop.clear()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-{self.kind}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # ends hangs, delays and slow streams
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._cond:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> FakeProviderServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.url_suffix}"

    def endpoint(self, slug: str | None = None, **overrides: Any) -> ModelEndpoint:
        """A ModelEndpoint pointing at this server (the key is read from ``api_key_env``)."""
        fields: dict[str, Any] = {
            "slug": slug or self.models[0],
            "provider_kind": self.kind,
            "api_model": overrides.pop("api_model", None) or slug or self.models[0],
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "max_tokens": 256,
            "system_prompt": "You are a helpful assistant.",
        }
        fields.update(overrides)
        return ModelEndpoint(**fields)

    # -- scripting and log ----------------------------------------------------------------------
    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours for the next requests (FIFO); afterwards ``default`` applies."""
        with self._cond:
            self._queue.extend(behaviours)

    def hold(self, after_tokens: int) -> threading.Event:
        """Every stream started from now on stops after ``after_tokens`` tokens until the
        returned event is set: a test acts mid-answer at a moment of its own choosing (kills
        a server, connects a page) instead of guessing how long the answer lasts."""
        release = threading.Event()
        self._hold = (after_tokens, release)
        return release

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._log)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == self.chat_path]

    def gaps(self) -> list[float]:
        """Seconds between consecutive chat requests (arrival times)."""
        times = [r.time for r in self.chat_requests]
        return [b - a for a, b in zip(times, times[1:], strict=False)]

    def clear_log(self) -> None:
        with self._cond:
            self._log.clear()

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._log) >= count,
                                       timeout=ceiling(timeout))

    # -- request handling -----------------------------------------------------------------------
    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._cond:
            (self._connections.add if add else self._connections.discard)(conn)

    def _wait(self, seconds: float | None) -> None:
        if seconds is not None and seconds <= 0:
            return
        if self._stop.wait(seconds):
            raise _Stopped

    def _dispatch(self, h: _Handler, method: str) -> None:
        path = urlsplit(h.path).path
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in h.headers.items()}
        rec = RecordedRequest(time.monotonic(), method, path, headers, body,
                              client_port=h.client_address[1])
        with self._cond:
            self._log.append(rec)
            self._counter += 1
            request_id = f"{self._counter:06d}"
            self._cond.notify_all()
        try:
            if method == "GET" and path == "/v1/models":
                h.send_json(200, self.models_payload())
            elif method == "POST" and path == self.chat_path:
                problem = self.check_request(rec)
                if problem:
                    self._send_error(h, rec, *problem)
                    return
                with self._cond:
                    behaviour = self._queue.popleft() if self._queue else self.default
                self._run(h, rec, behaviour, request_id)
            else:
                self._send_error(h, rec, 404, f"Unknown path {method} {path}")
        except (_Stopped, OSError):
            h.abort()

    def _send_error(self, h: _Handler, rec: RecordedRequest, status: int, message: str) -> None:
        headers = {"retry-after": "0"} if status == 429 else None
        h.send_json(status, self.error_payload(status, message), headers)

    def _run(self, h: _Handler, rec: RecordedRequest, b: Behaviour, request_id: str) -> None:
        if b.kind == "delay":
            self._wait(b.seconds)
            b = b.then or (self.default if self.default.kind != "delay" else Behaviour.ok())
        if b.kind == "hang":
            self._wait(b.seconds)
            h.abort()
        elif b.kind == "status":
            message = b.message or f"Fake error {b.status_code}"
            if b.echo_key:
                message += f" (key: {self.received_key(rec)})"
            self._send_error(h, rec, b.status_code, message)
        elif b.kind == "malformed":
            if rec.stream:
                h.start_sse()
                h.send_chunk(self.sse_junk(b.body))
                h.end_chunks()
            else:
                data = b.body if b.body is not None else b'{"id": "x", "choices": [ not json'
                h.send_response(200)
                h.send_header("Content-Type", "application/json")
                h.send_header("Content-Length", str(len(data)))
                h.end_headers()
                h.wfile.write(data)
        else:
            answer = self._answer(rec, b, request_id)
            if rec.stream:
                self._stream(h, rec, b, answer)
            else:
                self._plain(h, rec, b, answer)

    def _delays(self, b: Behaviour, n_tokens: int) -> tuple[float, float]:
        total = b.total_time if b.total_time is not None else self.total_time
        if total is not None:
            per = total / max(n_tokens, 1)
            return per, per
        first = b.first_token_delay if b.first_token_delay is not None else self.first_token_delay
        per = b.token_delay if b.token_delay is not None else self.token_delay
        return first, per

    def _wait_held(self, release: threading.Event) -> None:
        with self._cond:
            self.held += 1
            self._cond.notify_all()
        try:
            while not release.wait(0.05):
                if self._stop.is_set():  # the server stopping ends a held stream too
                    raise _Stopped
        finally:
            with self._cond:
                self.held -= 1

    def _answer(self, rec: RecordedRequest, b: Behaviour, request_id: str) -> Answer:
        body = rec.body
        if b.text is not None:
            text = b.text
        elif callable(self.reply_text):
            text = self.reply_text(rec)
        elif self.reply_text is not None:
            text = self.reply_text
        else:
            users = [m for m in rec.messages if m.get("role") == "user"]
            last = content_text(users[-1].get("content")) if users else ""
            text = f"{rec.model} says: {last}"
        tokens = split_tokens(text)
        limit = self.max_tokens(body)
        truncated = isinstance(limit, int) and 0 <= limit < len(tokens)
        if truncated:
            tokens = tokens[:limit]
        words = sum(len(content_text(m.get("content")).split()) for m in rec.messages)
        words += len(content_text(body.get("system")).split())
        usage = b.usage if b.usage is not None else self.usage
        return Answer(tokens, words, truncated, usage, request_id)

    def _stream(self, h: _Handler, rec: RecordedRequest, b: Behaviour, a: Answer) -> None:
        first, per = self._delays(b, len(a.tokens))
        hold = self._hold
        h.start_sse()
        for event in self.sse_preamble(rec, a):
            h.send_chunk(event)
        for i, token in enumerate(a.tokens):
            if b.kind in ("cut_stream", "stream_error") and i >= b.after_tokens:
                break
            if hold is not None and i == hold[0]:
                self._wait_held(hold[1])
            self._wait(first if i == 0 else per)
            try:
                h.send_chunk(self.sse_token(rec, a, token))
            except OSError:  # the client hung up mid-answer
                with self._cond:
                    self.abandoned.append((rec, i))
                    self._cond.notify_all()
                raise
        if b.kind == "cut_stream":
            h.abort()
            return
        if b.kind == "stream_error":
            h.send_chunk(self.sse_error(b.error_type or "overloaded_error"))
        else:
            for event in self.sse_finish(rec, a):
                h.send_chunk(event)
        h.end_chunks()

    def _plain(self, h: _Handler, rec: RecordedRequest, b: Behaviour, a: Answer) -> None:
        if b.kind == "stream_error":
            self._send_error(h, rec, 500, "Internal server error")
            return
        first, per = self._delays(b, len(a.tokens))
        self._wait(first + per * max(len(a.tokens) - 1, 0))
        data = json.dumps(self.plain_payload(rec, a)).encode()
        if b.kind == "cut_stream":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data[: len(data) // 2])
            h.abort()
            return
        h.send_json(200, json.loads(data))

    # -- provider-specific hooks ----------------------------------------------------------------
    def received_key(self, rec: RecordedRequest) -> str:
        raise NotImplementedError

    def check_request(self, rec: RecordedRequest) -> tuple[int, str] | None:
        raise NotImplementedError

    def max_tokens(self, body: dict[str, Any]) -> int | None:
        raise NotImplementedError

    def error_payload(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def models_payload(self) -> dict[str, Any]:
        raise NotImplementedError

    def plain_payload(self, rec: RecordedRequest, a: Answer) -> dict[str, Any]:
        raise NotImplementedError

    def sse_preamble(self, rec: RecordedRequest, a: Answer) -> list[bytes]:
        raise NotImplementedError

    def sse_token(self, rec: RecordedRequest, a: Answer, token: str) -> bytes:
        raise NotImplementedError

    def sse_finish(self, rec: RecordedRequest, a: Answer) -> list[bytes]:
        raise NotImplementedError

    def sse_error(self, error_type: str) -> bytes:
        raise NotImplementedError

    def sse_junk(self, body: bytes | None) -> bytes:
        raise NotImplementedError

"""The providers' HTTP transport (arena.llm.transport): kept connections, bounded drain, errors.

The calls run on the arena's I/O loop (``aio.run``), as a worker makes them, so they share the
loop's client and its connection pool.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import pytest

from arena import aio
from arena.llm import LLMConnectionError, ModelEndpoint, stream_chat
from testkit.fake_providers import Behaviour, FakeProviderServer

USER = [{"role": "user", "content": "say hello"}]

pytestmark = pytest.mark.usefixtures("fast_llm_retries")


@pytest.fixture(params=["openai", "anthropic"])
def fake(request: pytest.FixtureRequest) -> FakeProviderServer:
    return request.getfixturevalue(f"fake_{request.param}")


def test_streamed_answers_share_one_connection(fake: FakeProviderServer) -> None:
    """The OpenAI SDK closes a stream before its body's last chunk; the transport reads it, so
    the connection goes back to the pool and the next answer is sent on it."""
    endpoint = fake.endpoint("model-a")
    texts = [aio.run(stream_chat(endpoint, USER)).text for _ in range(3)]
    assert texts == ["model-a says: say hello"] * 3
    ports = [request.client_port for request in fake.chat_requests]
    assert len(ports) == 3 and ports[0] != 0
    assert len(set(ports)) == 1, f"a new connection per answer: client ports {ports}"


def test_a_stream_cut_by_the_server_is_a_lost_connection_not_a_timeout(
        fake: FakeProviderServer) -> None:
    fake.default = Behaviour.cut_stream(after_tokens=1)
    with pytest.raises(LLMConnectionError):
        aio.run(stream_chat(fake.endpoint("model-a"), USER))


class OpenBodyServer:
    """Speaks OpenAI's streaming chat completions, ends with ``data: [DONE]``, and then keeps
    the chunked body open (never sends its last, empty chunk) until the client hangs up."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.client_hung_up = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.settimeout(60)  # a guard against a hung test, never reached when it passes
            received = b""
            while b"\r\n\r\n" not in received:
                received += conn.recv(65536)
            head, _, body = received.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length"))
            while len(body) < length:
                body += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")
            for event in (self.chunk({"role": "assistant", "content": ""}),
                          self.chunk({"content": "hello"}),
                          self.chunk({}, finish="stop"),
                          b"data: [DONE]\n\n"):
                conn.sendall(b"%X\r\n%s\r\n" % (len(event), event))
            while conn.recv(65536):  # no last chunk; read until the client closes
                pass
            self.client_hung_up.set()

    @staticmethod
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        payload = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(payload).encode() + b"\n\n"


def test_a_body_kept_open_after_done_is_closed_not_waited_for() -> None:
    server = OpenBodyServer()
    endpoint = ModelEndpoint(slug="open-body", provider_kind="openai", api_model="m",
                             base_url=f"http://127.0.0.1:{server.port}/v1", api_key_env=None,
                             max_tokens=10, system_prompt="")
    completion = aio.run(stream_chat(endpoint, USER))
    assert completion.text == "hello"
    assert completion.attempts == 1  # answered, not timed out and retried
    server.thread.join(timeout=60)
    assert server.client_hung_up.is_set()
    server.listener.close()


def test_kept_clients_are_closed_as_the_process_exits(fake: FakeProviderServer) -> None:
    from arena.llm import client as llm_client

    aio.run(stream_chat(fake.endpoint("model-a"), USER))
    kept = list(llm_client._shared_clients.values())
    assert kept
    llm_client._close_shared_clients()  # what atexit calls
    assert all(client.is_closed() for client in kept)
    assert not llm_client._shared_clients

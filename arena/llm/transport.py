"""The HTTP side shared by both providers.

Building a TLS context loads the CA bundle, about 40 ms of CPU; doing it for every
call put that in front of every answer. One context is made once and shared (an
``ssl.SSLContext`` is safe to share between threads and event loops); each client
still gets its own connection pool, because a pool belongs to one event loop (on the
arena's I/O loop one client per endpoint is kept: :mod:`arena.llm.client`).

A worker's pool keeps a connection per model call it can hold at once, for a minute: a busy
arena calls the same few providers all the time, and a new connection (TCP, then TLS) costs
more CPU than the call's own work. A connection the provider closed meanwhile is noticed
before it is reused.

The SDKs speak HTTP through aiohttp (``httpx-aiohttp``, the transport both SDKs offer as
``DefaultAioHttpClient``), not httpcore: httpcore's pool looks at every connection it holds
for every request and every response it hands back (and asks the socket of each idle one
whether it is readable), so a worker holding a few hundred streams spent most of its CPU there.
aiohttp keeps idle connections per host in a queue, and parses HTTP in C.

Two corrections on the way:

- A connection only goes back to the pool once its response was read to the end. The OpenAI
  SDK stops reading a stream at ``data: [DONE]`` and closes the response before the chunked
  body's last, empty chunk is read (openai-python #3440, open), so every answer paid for a new
  connection. A response closed unfinished reads what is left first, for at most
  ``DRAIN_SECONDS`` and ``DRAIN_BYTES`` (a body dropped mid-answer, or a server that keeps it
  open, is then closed as before).
- ``httpx-aiohttp`` reports every lost connection (refused, reset, closed by the server) as a
  ``ConnectTimeout``, which the SDKs turn into "timed out". Those become ``ConnectError`` or
  ``ReadError`` again; only a real timeout stays a timeout.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from types import ModuleType

import aiohttp
import certifi
import httpx
import httpx2
import httpx_aiohttp
import httpx_aiohttp.httpx2
from django.conf import settings

DRAIN_SECONDS = 0.1
DRAIN_BYTES = 64 * 1024


@functools.cache
def tls_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=certifi.where())


def http_client(client_class: type) -> object:
    """An SDK's own HTTP client class (its timeouts, redirects) on the arena's transport.

    The OpenAI SDK's client is an ``httpx`` one, Anthropic's an ``httpx2`` one (a fork whose
    types it insists on); the transport is built for whichever the class is."""
    if issubclass(client_class, httpx.AsyncClient):
        http: ModuleType = httpx
        AiohttpTransport = httpx_aiohttp.AiohttpTransport
    else:
        http = httpx2
        AiohttpTransport = httpx_aiohttp.httpx2.AiohttpTransport
    limits = http.Limits(max_connections=1000,
                         max_keepalive_connections=max(settings.CELERY_WORKER_CONCURRENCY, 100),
                         keepalive_expiry=60)
    inner = AiohttpTransport(verify=tls_context(), limits=limits)
    return client_class(transport=_transport_class(http)(inner))


@functools.cache
def _transport_class(http: ModuleType) -> type:
    """The arena's transport for ``http`` (``httpx`` or ``httpx2``): same code, their types."""

    @contextmanager
    def corrected_errors() -> Iterator[None]:
        try:
            yield
        except http.TimeoutException as exc:
            if isinstance(exc.__cause__, TimeoutError):  # aiohttp's timeouts are TimeoutErrors
                raise
            lost = (http.ConnectError if isinstance(exc.__cause__, aiohttp.ClientConnectorError)
                    else http.ReadError)
            raise lost(str(exc) or type(exc.__cause__).__name__) from exc.__cause__

    class Body(http.AsyncByteStream):
        def __init__(self, stream) -> None:
            self._stream = stream
            self._parts: AsyncIterator[bytes] | None = None
            self._finished = False

        async def __aiter__(self) -> AsyncIterator[bytes]:
            # One iterator for the reader and the drain: the drain goes on where it stopped.
            if self._parts is None:
                self._parts = aiter(self._stream)
            with corrected_errors():
                async for part in self._parts:
                    yield part
            self._finished = True

        async def aclose(self) -> None:
            try:
                if not self._finished and self._parts is not None:
                    await self._drain(self._parts)
            finally:
                with corrected_errors():
                    await self._stream.aclose()

        async def _drain(self, parts: AsyncIterator[bytes]) -> None:
            read = 0
            try:
                async with asyncio.timeout(DRAIN_SECONDS):
                    async for part in parts:
                        read += len(part)
                        if read > DRAIN_BYTES:
                            return
                self._finished = True
            except (TimeoutError, http.HTTPError):
                pass  # closed unread, as without the drain

    class Transport(http.AsyncBaseTransport):
        def __init__(self, transport) -> None:
            self._transport = transport

        async def handle_async_request(self, request):
            with corrected_errors():
                response = await self._transport.handle_async_request(request)
            response.stream = Body(response.stream)
            return response

        async def aclose(self) -> None:
            await self._transport.aclose()

    return Transport

"""Log lines that say which request they belong to: the request id, and the formats.

Every HTTP request gets an id (:class:`arena.middleware.RequestIdMiddleware`), every websocket
connection one too (:class:`RequestIds`, in ``asgi.py``). It lives in :data:`REQUEST_ID`, a
context variable, so it follows the request wherever its code runs: into the sync view's
thread (asgiref copies the context), onto the worker's I/O loop (``aio.run`` copies it), and
into the steps the request starts: a Celery task sent while an id is set carries it in its
message headers (:func:`request_id_to_headers`), and the worker sets it again for as long as
the task runs (:func:`task_request_id_start`), so a step's own log lines, and the tasks it
sends in turn, carry the id of the request that started the work. :class:`RequestIdFilter`
puts it on every record the arena's handler writes.

The formats (``LOG_FORMAT``, read in the settings): ``plain`` for a person at a terminal, the
line it always was with `` [req=<id>]`` appended when there is an id (a line outside any
request reads as before); ``json`` (:mod:`arena.logs.json_lines`) one JSON object per line for
a log collector. This module loads nothing but the standard library: ``django.setup()``
configures logging in every process and command.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

REQUEST_ID: ContextVar[str | None] = ContextVar("arena_request_id", default=None)
HEADER = "X-Request-ID"
# The task message header that carries the id to the worker.
TASK_HEADER = "request_id"
# An id a caller (a proxy, a client) may choose: short, and nothing a log line or a header
# could be broken with (no space, no newline, no quote).
SAFE_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def request_id_safe(value: object) -> str | None:
    """``value`` if it is an id the arena may log and send back as it is, else None."""
    return value if isinstance(value, str) and SAFE_ID.fullmatch(value) else None


def request_id_for(incoming: str | None) -> str:
    """The id of a request: the caller's own ``X-Request-ID`` when it is a short safe token
    (a proxy's id then finds the arena's lines for its request), else a new one."""
    return request_id_safe(incoming) or uuid.uuid4().hex


@contextmanager
def request_id_bound(value: str | None) -> Iterator[None]:
    """Log lines and tasks sent inside the block carry ``value``."""
    token = REQUEST_ID.set(value)
    try:
        yield
    finally:
        REQUEST_ID.reset(token)


class RequestIdFilter(logging.Filter):
    """Puts the current request id (None outside a request) on each record as
    ``request_id``. On the handler, not a logger: a logger's filter sees only the records
    logged at that very logger, a handler's every record that reaches it.

    Django logs a 4xx or 5xx answer ("Not Found: /x") once the middleware is done with the
    request, its id unset again; the record carries the request itself, which holds it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get() or request_id_safe(
            getattr(getattr(record, "request", None), "request_id", None))
        return True


class PlainLines(logging.Formatter):
    """``time LEVEL logger: message``, and `` [req=<id>]`` when the record has an id."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        line = super().formatMessage(record)
        request_id = getattr(record, "request_id", None)
        return f"{line} [req={request_id}]" if request_id else line


class RequestIds:
    """ASGI middleware for the websocket routes: each connection gets an id (the caller's
    safe ``X-Request-ID`` or a new one) for all it logs and all the tasks it sends. A
    connection's consumer runs in the task this call runs in, or in threads that copy its
    context, so setting the variable here is enough."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        incoming = dict(scope.get("headers") or ()).get(HEADER.lower().encode(), b"")
        with request_id_bound(request_id_for(incoming.decode("latin-1"))):
            return await self.app(scope, receive, send)


# -- Celery: the id travels with the tasks a request sends (connected in arena.celery) -------

def request_id_to_headers(headers: dict | None) -> None:
    """Before a task is published: carry the current id in its message headers."""
    request_id = REQUEST_ID.get()
    if request_id is not None and headers is not None:
        headers[TASK_HEADER] = request_id


def task_request_id_start(task) -> None:
    """Before a task runs in a worker: the id its message carries (None if it has none; a
    worker thread runs many tasks, so a task without one must not inherit the last one's).
    A task run eagerly (in the sender's own thread) keeps the sender's id."""
    if not task.request.is_eager:
        REQUEST_ID.set(request_id_safe(task.request.get(TASK_HEADER)))


def task_request_id_end(task) -> None:
    """After a task ran in a worker: its thread's next work starts without an id."""
    if not task.request.is_eager:
        REQUEST_ID.set(None)

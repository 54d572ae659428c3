"""Public answers repeated from the web process's memory, before Django is reached.

A view marks an answer that is the same for everyone with ``Cache-Control: public,
max-age=N`` (:func:`public_for`), the header a proxy in front of the arena would also honour.
:class:`PublicAnswers`, wrapped around the whole HTTP application, keeps such an answer for
those N seconds and sends it again to the same ``GET`` (same path, same query, the same values
of the request headers its ``Vary`` names) without running Django's handler, middleware and
view for it: under load a busy board then costs the web process only the HTTP server's own
work per read.

Only what a view declared public is kept, and never an answer that sets a cookie, is not a
200, streams, or varies on everything (``Vary: *``). A request saying ``Cache-Control:
no-cache`` is answered afresh (and the fresh answer kept), and so is one with credentials
(``Authorization``): Django checks them, and refuses an unknown API token. A repeated answer
says a request id of its own in ``X-Request-ID``, never the one of the request it was kept
from.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.http import HttpResponse

from arena.logs import HEADER, request_id_for
from arena.metrics import ROUTE_KEY

MAX_ANSWERS = 512  # per process; when full, expired ones go, then all
MAX_AGE_RE = re.compile(rb"(?:^|,)\s*max-age\s*=\s*(\d+)")
REQUEST_ID = HEADER.lower().encode()


def public_for(response: HttpResponse, seconds: int) -> HttpResponse:
    """Mark ``response`` as the same for everyone for ``seconds`` (0: not to be kept)."""
    response["Cache-Control"] = f"public, max-age={seconds}" if seconds > 0 else "no-cache"
    return response


def request_headers(scope) -> dict[bytes, bytes]:
    """The request's headers by (lower-case) name, repeated ones joined as HTTP joins them."""
    headers: dict[bytes, bytes] = {}
    for name, value in scope.get("headers") or ():
        headers[name] = headers[name] + b", " + value if name in headers else value
    return headers


@dataclass(frozen=True)
class Answer:
    expires: float
    stored: float
    start: dict
    body: bytes
    route: str | None = None  # its route pattern, for the request metrics (arena.metrics)


class PublicAnswers:
    """ASGI middleware: see the module's docstring."""

    def __init__(self, app, *, clock: Callable[[], float] = time.monotonic,
                 max_answers: int = MAX_ANSWERS) -> None:
        self.app = app
        self.clock = clock
        self.max_answers = max_answers
        # By path and query: the request headers the latest answer varied on; by those and
        # their values: the answer.
        self.vary: dict[tuple[str, bytes], tuple[bytes, ...]] = {}
        self.answers: dict[tuple, Answer] = {}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "GET":
            return await self.app(scope, receive, send)
        resource = (scope["path"], scope.get("query_string", b""))
        headers = request_headers(scope)
        if (b"no-cache" not in headers.get(b"cache-control", b"")
                and b"authorization" not in headers):
            answer = self.answers.get(self._key(resource, headers))
            if answer is not None and answer.expires > self.clock():
                if answer.route:
                    scope[ROUTE_KEY] = answer.route
                return await self._repeat(answer, send, headers.get(REQUEST_ID, b""))
        sent: list[dict] = []

        async def keep_and_send(message):
            sent.append(message)
            await send(message)

        await self.app(scope, receive, keep_and_send)
        self._keep(resource, headers, sent, scope.get(ROUTE_KEY))

    def _key(self, resource, headers: dict) -> tuple:
        return (*resource, *(headers.get(name) for name in self.vary.get(resource, ())))

    async def _repeat(self, answer: Answer, send, incoming_id: bytes) -> None:
        age = str(int(self.clock() - answer.stored)).encode()
        request_id = request_id_for(incoming_id.decode("latin-1")).encode()
        await send({**answer.start, "headers": [*answer.start["headers"], (b"age", age),
                                                (REQUEST_ID, request_id)]})
        await send({"type": "http.response.body", "body": answer.body})

    def _keep(self, resource, headers: dict, sent: list[dict], route: str | None) -> None:
        if len(sent) != 2 or sent[0].get("status") != 200 or sent[1].get("more_body"):
            return
        start = sent[0]
        response_headers = {name.lower(): value for name, value in start["headers"]}
        control = response_headers.get(b"cache-control", b"").lower()
        max_age = MAX_AGE_RE.search(control)
        vary = tuple(sorted({name.strip().lower() for name in
                             response_headers.get(b"vary", b"").split(b",") if name.strip()}))
        if (b"public" not in control or not max_age or int(max_age[1]) <= 0
                or b"set-cookie" in response_headers or b"*" in vary):
            return
        now = self.clock()
        if len(self.answers) >= self.max_answers:
            self.answers = {k: a for k, a in self.answers.items() if a.expires > now}
            if len(self.answers) >= self.max_answers:
                self.answers.clear()
                self.vary.clear()
        self.vary[resource] = vary
        self.answers[self._key(resource, headers)] = Answer(
            expires=now + int(max_age[1]), stored=now,
            start={"type": start["type"], "status": 200,
                   "headers": [(name, value) for name, value in start["headers"]
                               if name.lower() != REQUEST_ID]},
            body=sent[1].get("body", b""), route=route)

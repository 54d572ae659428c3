"""Django's own middleware, run on the event loop rather than through a thread per hook.

Under daphne Django runs each hook of a sync middleware (``process_request``,
``process_view``, ``process_response``) by handing it to a thread and waiting for the answer:
a dozen hand-offs per request, which at a hundred requests at once cost more than the hooks.
These hooks only read and write the request and the response (headers, cookies, lazy
objects), so :class:`OnTheLoop` runs them where the request already is. Where a hook may
reach the database, its class says when (:meth:`OnTheLoop.needs_database`) and only then
takes the hand-off. A hook that touched the database on the loop anyway would fail loudly
(Django raises ``SynchronousOnlyOperation``), never block quietly.

Under a sync handler (the test client) each class is exactly Django's. Beside them, the
arena's own: the request id every log line names (:class:`RequestIdMiddleware`), and the
refusal of input no database can store (:class:`RejectUnstorableInput`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from csp import middleware as csp
from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.http import JsonResponse
from django.middleware import clickjacking, common, csrf, security
from django.shortcuts import render
from django.utils.deprecation import MiddlewareMixin

from arena.aio import database_call
from arena.errors import wants_json
from arena.inputs import UNSTORABLE, unstorable
from arena.logs import HEADER, request_id_bound, request_id_for
from arena.metrics import route_seen

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


class OnTheLoop:
    """Mix in before a ``MiddlewareMixin`` class: its hooks run on the event loop."""

    def __init__(self, get_response) -> None:
        super().__init__(get_response)
        if iscoroutinefunction(self) and hasattr(self, "process_view"):
            on_loop = self.process_view

            async def process_view(request, callback, args, kwargs):
                if self.view_needs_database(request, callback):
                    return await database_call(on_loop)(request, callback, args, kwargs)
                return on_loop(request, callback, args, kwargs)

            self.process_view = process_view  # what Django's handler picks up

    def needs_database(self, request, response) -> bool:
        """Whether ``process_response`` may touch the database for this response."""
        return False

    def view_needs_database(self, request, callback) -> bool:
        """Whether ``process_view`` may read much (or the database) for this request."""
        return False

    async def __acall__(self, request):
        response = None
        if hasattr(self, "process_request"):
            response = self.process_request(request)
        response = response or await self.get_response(request)
        if hasattr(self, "process_response"):
            if self.needs_database(request, response):
                response = await database_call(self.process_response)(request, response)
            else:
                response = self.process_response(request, response)
        return response


class RequestIdMiddleware:
    """Each request gets an id (:mod:`arena.logs`): the caller's ``X-Request-ID`` when it
    is a short safe token, else a new one. Everything the request logs and every task it
    sends carries it, and the response says it in ``X-Request-ID``, so a person's report or
    a proxy's log finds the arena's lines.

    Not an :class:`OnTheLoop` class, though it too runs where the request is (on the loop
    under daphne): its hooks could not unset the id when an exception leaves the handler,
    and the test client runs one request after another in the test's own thread, which must
    not keep the last one's id. What a streamed body logs while it is sent, after the
    response left here, is logged without it."""

    sync_capable = async_capable = True

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        with _request_id_of(request):
            response = self.get_response(request)
        response[HEADER] = request.request_id
        return response

    async def _acall(self, request):
        with _request_id_of(request):
            response = await self.get_response(request)
        response[HEADER] = request.request_id
        return response


@contextmanager
def _request_id_of(request) -> Iterator[None]:
    request.request_id = request_id_for(request.headers.get(HEADER))
    with request_id_bound(request.request_id):
        yield


class SecurityMiddleware(OnTheLoop, security.SecurityMiddleware):
    pass


class CommonMiddleware(OnTheLoop, common.CommonMiddleware):
    pass


class CsrfViewMiddleware(OnTheLoop, csrf.CsrfViewMiddleware):
    def view_needs_database(self, request, callback) -> bool:
        # Checking a form post parses its body, which may be large: off the loop.
        return request.method not in SAFE_METHODS and not getattr(callback, "csrf_exempt",
                                                                   False)


class AuthenticationMiddleware(OnTheLoop, auth.AuthenticationMiddleware):
    pass  # the user is a lazy object: loaded by whatever reads it, in sync code


class MessageMiddleware(OnTheLoop, messages.MessageMiddleware):
    def needs_database(self, request, response) -> bool:
        # Storing messages may spill from the cookie into the session.
        storage = getattr(request, "_messages", None)
        return storage is not None and (storage.used or storage.added_new)


class XFrameOptionsMiddleware(OnTheLoop, clickjacking.XFrameOptionsMiddleware):
    pass


class CSPMiddleware(OnTheLoop, csp.CSPMiddleware):
    pass  # the policy is a header built from settings


class RouteForMetrics(OnTheLoop, MiddlewareMixin):
    """Leaves the resolved route pattern where the request metrics read it
    (:class:`arena.metrics.RequestMetrics`, around the whole application)."""

    def process_view(self, request, callback, args, kwargs):
        route_seen(request)


FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


class RejectUnstorableInput(OnTheLoop, MiddlewareMixin):
    """What no database can even be asked about never reaches a view: a NUL byte in the
    path, a query parameter or a form field is a 400 naming it (PostgreSQL refuses it in
    any query, a lookup included), and a cookie holding one is ignored. JSON bodies are
    checked by the API's parser (:class:`arena.api.StorableJsonParser`)."""

    def process_request(self, request):
        for name, value in list(request.COOKIES.items()):
            if unstorable(name) or unstorable(value):
                del request.COOKIES[name]
        if unstorable(request.path):
            return _refused(request, "The address", unstorable(request.path))
        return _first_refused(request, request.GET, "The query parameter")

    def view_needs_database(self, request, callback) -> bool:
        return request.content_type in FORMS  # parsing a form body is work for a thread

    def process_view(self, request, callback, args, kwargs):
        if request.method == "POST" and request.content_type in FORMS:
            return _first_refused(request, request.POST, "The field")
        return None


def _first_refused(request, data, kind: str):
    for name, values in data.lists():
        for value in (name, *values):
            if isinstance(value, str) and unstorable(value):
                return _refused(request, f"{kind} {name!r}", unstorable(value))
    return None


def _refused(request, field: str, what: str):
    message = UNSTORABLE.format(field=field, what=what)
    if wants_json(request):
        return JsonResponse({"detail": message}, status=400)
    return render(request, "400.html", {"message": message}, status=400)

"""Django's own middleware, run on the event loop rather than through a thread per hook.

Under daphne Django runs each hook of a sync middleware (``process_request``,
``process_view``, ``process_response``) by handing it to a thread and waiting for the answer:
a dozen hand-offs per request, which at a hundred requests at once cost more than the hooks.
These hooks only read and write the request and the response (headers, cookies, lazy
objects), so :class:`OnTheLoop` runs them where the request already is. Where a hook may
reach the database, its class says when (:meth:`OnTheLoop.needs_database`) and only then
takes the hand-off. A hook that touched the database on the loop anyway would fail loudly
(Django raises ``SynchronousOnlyOperation``), never block quietly.

Under a sync handler (the test client) each class is exactly Django's.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction
from csp import middleware as csp
from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.middleware import clickjacking, common, csrf, security

from arena.aio import database_call

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

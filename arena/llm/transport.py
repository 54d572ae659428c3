"""The HTTP side shared by both providers.

Building a TLS context loads the CA bundle, about 40 ms of CPU; doing it for every
call put that in front of every answer. One context is made once and shared (an
``ssl.SSLContext`` is safe to share between threads and event loops); each call
still gets its own connection pool, because a pool belongs to one event loop.

A worker's pool keeps a connection per model call it can hold at once, for a minute: a busy
arena calls the same few providers all the time, and a new connection (TCP, then TLS) costs
more CPU than the call's own work. A connection the provider closed meanwhile is noticed
before it is reused.
"""

from __future__ import annotations

import functools
import ssl

import certifi
import httpx
from django.conf import settings


@functools.cache
def tls_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=certifi.where())


def connection_limits() -> httpx.Limits:
    return httpx.Limits(max_connections=1000,
                        max_keepalive_connections=max(settings.CELERY_WORKER_CONCURRENCY, 100),
                        keepalive_expiry=60)

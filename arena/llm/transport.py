"""The HTTP side shared by both providers.

Building a TLS context loads the CA bundle, about 40 ms of CPU; doing it for every
call put that in front of every answer. One context is made once and shared (an
``ssl.SSLContext`` is safe to share between threads and event loops); each call
still gets its own connection pool, because a pool belongs to one event loop.
"""

from __future__ import annotations

import functools
import ssl

import certifi


@functools.cache
def tls_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=certifi.where())

"""The queue's Redis: a worker that outlives it, a sweep that notices it forgot its queue,
and a client with short timeouts for the arena's own keys there (the workers' heartbeat).

A Celery worker that outlives its Redis: kombu's Redis channel closed after a lost server.

When Redis dies while the worker runs tasks (every step is acked late, so their messages are
unacknowledged), Celery drops the broken connection in two passes: ``collect()`` closes its
channels and then detaches the transport (``transport.client = None``), then ``close()``
closes them again. kombu's Redis ``Channel.close`` first reads the reply of the ``BRPOP`` it
has in flight; on a dead server that read raises a connection error, which ends the first
pass before the channel is marked closed. The second pass then gets past the read, tries to
put the unacknowledged messages back, builds a connection pool from the detached transport
and fails on ``None.hostname``: an ``AttributeError`` that is no connection error, so the
worker logs ``Unrecoverable error`` and exits, and every answer it was writing is cut off
(kombu 5.7.0, Celery 5.7.0; seen with ``SIGKILL`` of Redis during a battle).

:func:`mend_redis_channel_close` makes the first pass finish: a connection error while the
in-flight reply is read means there is no reply to read, so the close goes on, marks the
channel closed and tries (and, with the server gone, fails) to put the messages back, and
the second pass finds nothing left to do. The worker then reconnects as it does for any other
connection loss, and the tasks it is running go on (the step runner saves their results;
the stale-step sweep covers anything the dead Redis took with it).
"""

from __future__ import annotations

import functools
import threading
from queue import Empty

import redis
from django.conf import settings
from kombu.transport import redis as kombu_redis

_MENDED = "_arena_mended"
_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def broker_redis() -> redis.Redis:
    """One client per Redis address, with short timeouts: a stalled Redis costs a call a
    second, not the stall. The queue is on the Redis of ``REDIS_URL``."""
    url = settings.REDIS_URL
    client = _clients.get(url)
    if client is None:
        with _clients_lock:
            client = _clients.get(url)
            if client is None:
                client = _clients[url] = redis.Redis.from_url(
                    url, socket_timeout=1, socket_connect_timeout=1)
    return client


def queue_mark_key() -> str:
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    return f"{prefix}:queue-mark:{settings.CELERY_TASK_DEFAULT_QUEUE}"


def queue_forgotten() -> bool:
    """Whether the queue's Redis lost what it held since the last look: the mark this leaves
    there is gone (a Redis that restarted empty, as the embedded one does, forgot every task
    message waiting in the queue). False while Redis does not answer: it is looked at again.
    The first look ever finds no mark either, which only resends what waits (harmless: the
    claim runs each step once)."""
    try:
        return bool(broker_redis().set(queue_mark_key(), "1", nx=True))
    except redis.RedisError:
        return False


def mend_redis_channel_close() -> None:
    """Patch kombu's Redis ``Channel.close`` as the module docstring says (once)."""
    close = kombu_redis.Channel.close
    if getattr(close, _MENDED, False):
        return

    @functools.wraps(close)
    def close_after_a_lost_server(self) -> None:
        if self._in_poll:
            try:
                self._brpop_read()
            except Empty:
                pass
            except self.connection_errors:
                pass  # the server is gone: there is no reply; close the rest
        close(self)

    setattr(close_after_a_lost_server, _MENDED, True)
    kombu_redis.Channel.close = close_after_a_lost_server

"""A Celery worker that outlives its Redis: kombu's Redis channel closed after a lost server.

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
from queue import Empty

from kombu.transport import redis as kombu_redis

_MENDED = "_arena_mended"


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

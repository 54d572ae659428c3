"""Live streams: a relay that publishes a text as it is written, a base WebSocket consumer that
catches a late page up (the JSON API waits for their ends with :mod:`arena.stream_wait`).

Every mode streams the same way. A writer (a worker thread, through :mod:`arena.aio`) sends
chunks to a channel-layer *group* with increasing sequence numbers and appends them to a
snapshot in Redis (``APPEND``, not a rewrite per chunk). A page joins the group first and reads
the snapshot second, so it misses nothing and drops chunks whose number the snapshot already
holds. Only the ids and fields the mode passes as ``meta`` travel; nothing names a model.

Messages (JSON, as the page receives them)::

    {"event": "delta",    "seq": n, "text": chunk, **meta}
    {"event": "restart",  "seq": n, **meta}          # start the text over (a retried attempt)
    {"event": "snapshot", "seq": n, "text": so_far, **meta}   # on connect; after a failure
    {"event": <mode's own>, **payload}               # e.g. "done", "failed", "changed"

Stopping: :func:`stop_stream_sync` sets the stream's stop flag and reads what was written, in
one Redis transaction; the writer's next flush sees the flag (in its own transaction), sends
nothing more and raises :class:`StreamStopped`. Whatever a page was sent is in the text that
the stopping side read, so the side that stops keeps all of it; unless Redis restarted empty
just before, and the writer had not written the text again yet: then the stopping side read
less, and the writer's :attr:`StreamRelay.written` is what it keeps.

Redis failing under a writer: the writer keeps the whole text and its own sequence numbers, so
a Redis that stalls or dies (and comes back empty: the embedded one keeps nothing on disk)
costs no text. While Redis does not answer the writer goes on and tries again at most every
:data:`RETRY_SECONDS`; once it answers, the writer writes the snapshot whole and sends it as a
``snapshot`` event, which a page takes in place of what it had. A snapshot Redis lost between
two chunks is noticed by the append (its length is not the text's) and written whole the same
way. A page whose socket closed meanwhile reconnects and reads that snapshot.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings

from arena import aio
from arena.sessions import owner_key

if TYPE_CHECKING:
    import redis.asyncio as aioredis
    from redis.exceptions import RedisError

SNAPSHOT_TTL_SECONDS = 900
# Each call to Redis gives up after this long (a stalled Redis holds no writer, request or
# page for the whole stall); a writer that lost Redis tries again at most this often.
REDIS_CALL_SECONDS = 1.0
RETRY_SECONDS = 1.0
# The channel layer's calls on a request path or in a writer: sending an event, joining a group.
LAYER_CALL_SECONDS = 2.0
EVENT_TYPE = "stream.event"  # the consumer's handler: StreamConsumer.stream_event
FINISH_EVENTS = frozenset({"done", "failed"})

T = TypeVar("T")
logger = logging.getLogger(__name__)
_redis_by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _redis() -> aioredis.Redis:
    """One Redis client per event loop (connections belong to the loop that opened them)."""
    import redis.asyncio as aioredis  # noqa: PLC0415 - 0.25 s: not for the models that import this

    loop = asyncio.get_running_loop()
    client = _redis_by_loop.get(loop)
    if client is None:
        client = _redis_by_loop[loop] = aioredis.from_url(
            settings.REDIS_URL, socket_timeout=REDIS_CALL_SECONDS,
            socket_connect_timeout=REDIS_CALL_SECONDS)
    return client


def redis_error() -> type[Exception]:
    """redis-py's base error, imported when an error is first matched (redis would cost every
    process that imports the streams' names 0.25 s at setup)."""
    from redis.exceptions import RedisError  # noqa: PLC0415 - see above

    return RedisError


def _keys(stream_id: str) -> tuple[str, str]:
    return f"arena:stream:{stream_id}:text", f"arena:stream:{stream_id}:seq"


def _stop_key(stream_id: str) -> str:
    return f"arena:stream:{stream_id}:stop"


class StreamStopped(Exception):  # noqa: N818 - an outcome, not a failure
    """Raised to the writer when someone stopped its stream (:func:`stop_stream_sync`)."""


def end_group(group: str) -> str:
    """Where a stream's ends are also announced: the JSON API's waiters listen here, so they
    are not woken by every chunk."""
    return f"{group}.end"


async def bounded(call: Awaitable[T]) -> T:
    """A channel-layer call that gives up after :data:`LAYER_CALL_SECONDS` with Redis's own
    timeout error (answered as "temporarily unavailable"): channels_redis sets no socket
    timeout, and a page's socket should wait out a stall rather than fail, but a request or a
    writer should not."""
    try:
        return await asyncio.wait_for(call, LAYER_CALL_SECONDS)
    except TimeoutError:
        from redis.exceptions import TimeoutError as RedisTimeout  # noqa: PLC0415 - see redis_error

        raise RedisTimeout("the channel layer (Redis) did not answer") from None


async def publish(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    await bounded(layer.group_send(group, {"type": EVENT_TYPE, "message": message}))
    if message.get("event") in FINISH_EVENTS:
        await bounded(layer.group_send(end_group(group),
                                       {"type": EVENT_TYPE, "message": message}))


def publish_sync(group: str, message: dict[str, Any]) -> None:
    """:func:`publish` from sync code (a service, a sweep); never raises for a Redis blip."""
    try:
        aio.run(publish(group, message))
    except Exception:  # the page re-reads the database; an event is a courtesy
        logger.warning("could not publish %s to %s", message.get("event"), group)


class StreamRelay:
    """Publishes one text's chunks to ``group`` and keeps its catch-up snapshot.

    Chunks are coalesced: the first goes out at once, later ones at most every
    ``ARENA_STREAM_FLUSH_MS`` (a model writes a token every few milliseconds; a page needs
    far fewer updates, and each one costs Redis round trips for every open stream).
    ``restart`` and ``finish`` send whatever is pending first, so nothing written is lost
    and the order holds; :meth:`flush` sends what is pending on demand.

    A chunk is only published while someone is in the group (most answers are watched by
    nobody: an API caller waits for the end, a page was closed). The snapshot's append and
    the count of the group's members are one transaction, and a page joins the group before
    it reads the snapshot: either the count sees the page, or the page's snapshot holds the
    chunk.
    """

    def __init__(self, *, group: str, stream_id: str, meta: dict[str, Any]) -> None:
        self.group = group
        self.stream_id = str(stream_id)
        self.meta = meta
        # Microseconds since the epoch: a redelivered job (its worker died mid-answer)
        # continues above every number an earlier attempt sent.
        self.seq = time.time_ns() // 1000
        self.text_key, self.seq_key = _keys(self.stream_id)
        self.interval = settings.ARENA_STREAM_FLUSH_MS / 1000
        self._pending: list[str] = []
        self._sent_at = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self.stop_key = _stop_key(self.stream_id)
        # channels_redis keeps a group's members in this sorted set (a single-host layer, as
        # settings configure it).
        self.members_key = get_channel_layer()._group_key(group)
        self.stopped = False
        # Everything written (in this attempt), to write the snapshot whole from when Redis
        # lost it; its length in bytes, as Redis counts the snapshot's.
        self.text = ""
        self._size = 0
        # The text as Redis last held it from this writer: the most a page may have been sent
        # or read. A stop reads Redis; one that came after Redis restarted empty, before this
        # writer wrote it again, read less (the mode's stop keeps this instead).
        self.written = ""
        self._lost = False
        self._retry_at = 0.0

    async def _send(self, event: str, **payload: Any) -> None:
        await publish(self.group, {"event": event, **self.meta, **payload})

    async def delta(self, chunk: str) -> None:
        """Queue a chunk; raises :class:`StreamStopped` once the stream was stopped."""
        if self.stopped:
            raise StreamStopped(self.stream_id)
        if not chunk:
            return
        self._pending.append(chunk)
        wait = self._sent_at + self.interval - time.monotonic()
        if wait <= 0:
            await self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self._flush_later)

    def _flush_later(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        task.add_done_callback(_log_failure)

    async def flush(self) -> None:
        """Publish the chunks not sent yet, as one delta (none once the stream is stopped).
        Redis failing loses nothing: the chunk is kept in :attr:`text` (see the module)."""
        async with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._pending or self.stopped:
                return
            chunk, self._pending = "".join(self._pending), []
            self._sent_at = time.monotonic()
            self.seq += 1
            self.text += chunk
            self._size += len(chunk.encode())
            if self._lost and time.monotonic() < self._retry_at:
                return
            try:
                await self._write(chunk)
            except redis_error() as exc:
                self._lose(exc)

    async def _write(self, chunk: str) -> None:
        whole = self._lost
        if not whole:
            async with _redis().pipeline(transaction=True) as pipe:
                pipe.append(self.text_key, chunk).set(self.seq_key, self.seq)
                pipe.expire(self.text_key, SNAPSHOT_TTL_SECONDS)
                pipe.expire(self.seq_key, SNAPSHOT_TTL_SECONDS)
                pipe.exists(self.stop_key)
                pipe.zcard(self.members_key)
                size, *_, stopped, watchers = await pipe.execute()
            # Shorter than the text: Redis lost the snapshot since the last chunk.
            whole = size != self._size
        if whole:
            self.seq += 1  # above the number a page may have read with the shorter text
            async with _redis().pipeline(transaction=True) as pipe:
                pipe.set(self.text_key, self.text, ex=SNAPSHOT_TTL_SECONDS)
                pipe.set(self.seq_key, self.seq, ex=SNAPSHOT_TTL_SECONDS)
                pipe.exists(self.stop_key)
                pipe.zcard(self.members_key)
                *_, stopped, watchers = await pipe.execute()
            self._lost = False
        if stopped:
            # The stopping side read the text after this chunk or without it; either
            # way no page is sent more than it keeps.
            self.stopped = True
            raise StreamStopped(self.stream_id)
        self.written = self.text
        if watchers and whole:
            await self._send("snapshot", seq=self.seq, text=self.text)
        elif watchers:
            await self._send("delta", seq=self.seq, text=chunk)

    def _lose(self, exc: RedisError) -> None:  # write the snapshot whole once Redis answers
        if not self._lost:
            logger.warning("stream %s: Redis failed (%r); its text is kept and sent whole once "
                           "Redis answers", self.stream_id, exc)
        self._lost = True
        self._retry_at = time.monotonic() + RETRY_SECONDS

    async def restart(self) -> None:
        await self.flush()
        async with self._lock:
            self.seq += 1
            self.text, self._size, self.written = "", 0, ""
            if self._lost and time.monotonic() < self._retry_at:
                return  # the next snapshot, written whole, starts the page over
            try:
                async with _redis().pipeline(transaction=True) as pipe:
                    pipe.set(self.text_key, "", ex=SNAPSHOT_TTL_SECONDS)
                    pipe.set(self.seq_key, self.seq, ex=SNAPSHOT_TTL_SECONDS)
                    await pipe.execute()
                await self._send("restart", seq=self.seq)
            except redis_error() as exc:
                self._lose(exc)

    async def finish(self, event: str, **payload: Any) -> None:
        """Drop the snapshot (the database has the text now) and announce the end. With Redis
        failing the end goes unannounced, and nothing is lost: a page re-reads an answer it
        heard nothing of for a while, and reconnecting."""
        await self.flush()
        try:
            await _redis().delete(self.text_key, self.seq_key)
            await self._send(event, **payload)
        except redis_error() as exc:
            logger.warning("stream %s: its end (%s) could not be announced: %r", self.stream_id,
                           event, exc)


def _log_failure(task: asyncio.Future) -> None:
    if task.cancelled() or isinstance(task.exception(), StreamStopped | None):
        return  # a stop is seen again by the writer's next delta
    logger.warning("a stream's chunks could not be published: %r", task.exception())


async def stop_stream(stream_id: str) -> str:
    """Stop a stream's writer at its next chunk; the text written so far (the snapshot).

    The flag and the read are one transaction: every chunk a page was sent is in the text.
    """
    text_key, _ = _keys(str(stream_id))
    async with _redis().pipeline(transaction=True) as pipe:
        pipe.set(_stop_key(str(stream_id)), 1, ex=SNAPSHOT_TTL_SECONDS).get(text_key)
        _, text = await pipe.execute()
    return (text or b"").decode()


def stop_stream_sync(stream_id: str) -> str:
    """:func:`stop_stream` from sync code (a service)."""
    return aio.run(stop_stream(stream_id))


async def read_snapshot(stream_id: str) -> dict[str, Any] | None:
    text_key, seq_key = _keys(str(stream_id))
    async with _redis().pipeline(transaction=True) as pipe:
        text, seq = await pipe.get(text_key).get(seq_key).execute()
    if seq is None:
        return None
    return {"seq": int(seq), "text": (text or b"").decode()}


class StreamConsumer(AsyncJsonWebsocketConsumer):
    """Authorise in ``connect``, join the group, replay the snapshots, relay.

    A mode subclasses it and implements :meth:`authorize` (sync, runs in a thread with the
    database): return ``None`` to refuse (closed with 4404), else ``(group, streams)`` where
    ``streams`` are ``(stream_id, meta)`` pairs of texts still being written.
    """

    group: str | None = None

    def authorize(self, *, session_key: str | None, **route: str) -> tuple[
            str, Iterable[tuple[str, dict[str, Any]]]] | None:
        raise NotImplementedError

    def _authorize(self, session, route: dict[str, str]):
        # The session's key is vetted against the session table when first read: a query,
        # so here in the thread, never on the event loop.
        return self.authorize(session_key=owner_key(session), **route)

    async def connect(self):
        route = self.scope["url_route"]["kwargs"]
        allowed = await database_sync_to_async(self._authorize)(self.scope.get("session"), route)
        if allowed is None:
            await self.close(code=4404)
            return
        self.group, streams = allowed[0], list(allowed[1])
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        # Joined first, snapshot second: nothing published after the join is missed.
        await self.joined()
        for stream_id, meta in streams:
            snapshot = await read_snapshot(stream_id)
            if snapshot is not None:
                await self.send_json({"event": "snapshot", **meta, **snapshot})

    async def joined(self) -> None:
        """Send the mode's own opening state, if it has one: called once the group is joined
        and before the snapshots, so whatever it reads now is as new as anything published
        from here on (read it here, not in :meth:`authorize`, which runs before the join: an
        event published in between would be lost and the state sent stale)."""

    async def disconnect(self, code):
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def stream_event(self, event):
        await self.send_json(event["message"])

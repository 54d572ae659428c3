"""The stream relay when Redis fails under it (a real redis-server of the test's own, paused or
killed and started again empty): the writer loses no text and fails nothing; once Redis
answers, its snapshot is written whole and sent, and a page that applies what it is sent the
way the pages do ends with the text exactly once."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis
from channels.layers import get_channel_layer

import arena.streaming as streaming
from arena.stream_wait import wait_until
from arena.streaming import StreamRelay, StreamStopped, read_snapshot, stop_stream
from testkit.waiting import async_wait_for, ceiling


class Page:
    """One stream as a page shows it (static/js/battle.js): a snapshot not older than what it
    has replaces its text, a newer delta is added, a restart empties it."""

    def __init__(self) -> None:
        self.text, self.seq = "", 0

    def take(self, message: dict) -> None:
        event, seq = message["event"], message.get("seq", 0)
        if event == "snapshot" and seq >= self.seq:
            self.text, self.seq = message["text"], seq
        elif event == "delta" and seq > self.seq:
            self.text, self.seq = self.text + message["text"], seq
        elif event == "restart" and seq > self.seq:
            self.text, self.seq = "", seq


async def _join(page: Page, group: str, stream_id: str) -> tuple[object, str]:
    """The page (re)connects: joins the group, then reads the snapshot."""
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    snapshot = await read_snapshot(stream_id)
    if snapshot is not None:
        page.take({"event": "snapshot", **snapshot})
    return layer, channel


async def _hear(page: Page, layer, channel: str, until: str) -> list[dict]:
    """What the page is sent, up to and including the first ``until`` event."""
    heard = []
    while not heard or heard[-1]["event"] != until:
        event = await asyncio.wait_for(layer.receive(channel), timeout=ceiling(5))
        heard.append(event["message"])
        page.take(heard[-1])
    return heard


@pytest.fixture
def relay(private_redis, settings, monkeypatch) -> StreamRelay:
    settings.ARENA_STREAM_FLUSH_MS = 0  # every chunk goes out by itself
    monkeypatch.setattr(streaming, "RETRY_SECONDS", 0.0)  # and tries Redis again at once
    stream_id = str(uuid.uuid4())
    return StreamRelay(group=f"test.{uuid.uuid4().hex}", stream_id=stream_id,
                       meta={"response": stream_id})


async def test_a_writer_whose_redis_died_keeps_writing_and_resends_its_text_whole(
        relay, private_redis):
    page = Page()
    layer, channel = await _join(page, relay.group, relay.stream_id)
    await relay.delta("One ")
    await relay.delta("two ")
    await _hear(page, layer, channel, until="delta")
    await _hear(page, layer, channel, until="delta")

    private_redis.kill()
    await relay.delta("three ")  # raised ConnectionError, and the step failed, before
    private_redis.start()  # empty: no snapshot, no group, the page's socket closed

    layer, channel = await _join(page, relay.group, relay.stream_id)  # it reconnects
    assert page.text == "One two "  # nothing to read yet: it keeps what it had
    await relay.delta("four.")
    heard = await _hear(page, layer, channel, until="snapshot")
    assert heard == [{"event": "snapshot", "response": relay.stream_id, "seq": relay.seq,
                      "text": "One two three four."}]
    await relay.delta(" Five.")
    await relay.finish("done")
    await _hear(page, layer, channel, until="done")
    assert page.text == "One two three four. Five."


async def test_a_snapshot_redis_lost_between_two_chunks_is_written_whole(relay, private_redis):
    await relay.delta("One ")
    # Redis restarted empty between two chunks, before the writer's next call noticed it.
    redis.Redis(unix_socket_path=str(private_redis.socket)).flushall()
    await relay.delta("two.")
    page = Page()
    await _join(page, relay.group, relay.stream_id)
    assert page.text == "One two."  # not "two.": the append's length gave it away


async def test_a_stop_that_read_what_redis_still_held_leaves_the_writer_what_it_wrote(
        relay, private_redis):
    """Redis restarted empty between two chunks, and the person stopped before the writer
    wrote the text again: the stop read nothing. The writer knows what the pages may have
    had, for the mode to keep (battles: stopped_answer_keep_written)."""
    await relay.delta("One ")
    await relay.delta("two ")
    redis.Redis(unix_socket_path=str(private_redis.socket)).flushall()
    assert await stop_stream(relay.stream_id) == ""
    with pytest.raises(StreamStopped):
        await relay.delta("three ")
    assert relay.written == "One two "  # "three " went to no page


async def test_a_writer_whose_redis_stalled_goes_on_and_resends_its_text_whole(
        relay, private_redis):
    page = Page()
    layer, channel = await _join(page, relay.group, relay.stream_id)
    await relay.delta("One ")
    await _hear(page, layer, channel, until="delta")
    with private_redis.paused():
        # Gives up on Redis after a second (it waited for the whole stall before).
        await asyncio.wait_for(relay.delta("two "), timeout=ceiling(5))
    await relay.delta("three.")
    await _hear(page, layer, channel, until="snapshot")
    await relay.finish("done")
    await _hear(page, layer, channel, until="done")
    assert page.text == "One two three."
    assert await read_snapshot(relay.stream_id) is None


async def test_an_api_wait_goes_on_reading_the_database_when_redis_dies(private_redis):
    """The JSON API's wait listens for the ends on the channel layer; Redis dying under it
    answered the caller 503 although the answers were being written. It reads the database
    every few seconds instead, and answers."""
    written = asyncio.Event()

    async def check():
        return ("the answers" if written.is_set() else None), 1

    group = f"test.{uuid.uuid4().hex}"
    waiting = asyncio.ensure_future(wait_until(group, check, timeout=ceiling(30), recheck=0.2))
    members = get_channel_layer()._group_key(streaming.end_group(group))
    store = redis.Redis(unix_socket_path=str(private_redis.socket))
    await async_wait_for(lambda: store.zcard(members), what="the wait to join the group")
    private_redis.kill()
    written.set()
    assert await waiting == "the answers"

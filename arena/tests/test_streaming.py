"""The stream relay on the real channel layer and Redis: chunks are joined, never lost or
reordered, and a page that joins late catches up from the snapshot."""

from __future__ import annotations

import asyncio
import uuid

from channels.layers import get_channel_layer

from arena.streaming import StreamRelay, read_snapshot


async def _listen(group: str) -> tuple[object, str]:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    return layer, channel


async def _received(layer, channel: str, until: str) -> list[dict]:
    """Every message up to and including the first ``until`` event."""
    messages = []
    while True:
        event = await asyncio.wait_for(layer.receive(channel), timeout=10)
        messages.append(event["message"])
        if event["message"]["event"] == until:
            return messages


async def _listening_relay(settings, flush_ms: int) -> tuple[object, str, StreamRelay]:
    """A relay with the given flush interval, and a channel listening to its group."""
    settings.ARENA_STREAM_FLUSH_MS = flush_ms
    group = f"test.{uuid.uuid4().hex}"
    layer, channel = await _listen(group)
    stream_id = str(uuid.uuid4())
    relay = StreamRelay(group=group, stream_id=stream_id, meta={"response": stream_id})
    return layer, channel, relay


async def test_chunks_written_quickly_go_out_joined_in_order(settings):
    # nothing but the first chunk goes out by itself
    layer, channel, relay = await _listening_relay(settings, 60_000)
    words = [f"w{i} " for i in range(50)]
    for word in words:
        await relay.delta(word)
    snapshot = await read_snapshot(relay.stream_id)
    await relay.finish("done")

    messages = await _received(layer, channel, until="done")
    deltas = [m for m in messages if m["event"] == "delta"]
    assert [d["text"] for d in deltas] == [words[0], "".join(words[1:])]
    assert deltas[0]["seq"] < deltas[1]["seq"]
    assert all(d["response"] == relay.stream_id for d in deltas)
    # What was pending was not in the snapshot yet; the finish sent it before "done".
    assert snapshot["text"] == words[0]
    assert await read_snapshot(relay.stream_id) is None


async def test_pending_chunks_go_out_before_a_restart(settings):
    layer, channel, relay = await _listening_relay(settings, 60_000)
    for chunk in ("a", "b", "c"):
        await relay.delta(chunk)
    await relay.restart()
    await relay.delta("fresh")
    await relay.flush()
    assert (await read_snapshot(relay.stream_id))["text"] == "fresh"
    await relay.finish("done")

    messages = await _received(layer, channel, until="done")
    assert [(m["event"], m.get("text")) for m in messages] == [
        ("delta", "a"), ("delta", "bc"), ("restart", None), ("delta", "fresh"), ("done", None)]
    seqs = [m["seq"] for m in messages if "seq" in m]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


async def test_a_pending_chunk_goes_out_by_itself_when_the_writer_pauses(settings):
    layer, channel, relay = await _listening_relay(settings, 5)
    await relay.delta("first ")
    await relay.delta("second")  # within the interval: held, then sent by the timer
    messages = await _received(layer, channel, until="delta")
    messages += await _received(layer, channel, until="delta")
    assert "".join(m["text"] for m in messages) == "first second"
    assert (await read_snapshot(relay.stream_id))["text"] == "first second"
    await relay.finish("done")


async def test_without_an_interval_every_chunk_goes_out(settings):
    layer, channel, relay = await _listening_relay(settings, 0)
    for chunk in ("x", "y", "z"):
        await relay.delta(chunk)
    await relay.finish("failed", error="boom")
    messages = await _received(layer, channel, until="failed")
    assert [m.get("text") for m in messages] == ["x", "y", "z", None]
    assert messages[-1]["error"] == "boom"


async def test_chunks_are_published_only_while_someone_is_in_the_group(settings, monkeypatch):
    import arena.streaming as streaming

    settings.ARENA_STREAM_FLUSH_MS = 0
    published: list[str] = []
    original = streaming.publish

    async def recording(group, message):
        published.append(message["event"])
        await original(group, message)

    monkeypatch.setattr(streaming, "publish", recording)
    group = f"test.{uuid.uuid4().hex}"
    stream_id = str(uuid.uuid4())
    relay = StreamRelay(group=group, stream_id=stream_id, meta={"response": stream_id})

    await relay.delta("unwatched ")  # nobody in the group: kept in the snapshot only
    assert published == []
    assert (await read_snapshot(stream_id))["text"] == "unwatched "

    layer, channel = await _listen(group)  # a page joins, then reads the snapshot
    await relay.delta("watched")
    await relay.finish("done")
    messages = await _received(layer, channel, until="done")
    assert [(m["event"], m.get("text")) for m in messages] == [
        ("delta", "watched"), ("done", None)]
    assert published == ["delta", "done"]

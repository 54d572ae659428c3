"""Generating one side's answer: stream from the provider, relay, save.

Runs inside a Celery task. Chunks go to the battle's channel-layer group with a
sequence number, and the text so far is kept in Redis under the same number,
so a page that connects late catches up without gaps or repeats. Only the
screen position and random ids travel; nothing names the model.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

import redis.asyncio as aioredis
from channels import DEFAULT_CHANNEL_LAYER
from channels.layers import channel_layers
from django.conf import settings
from django.db import transaction

from arena.llm import LLMError, stream_chat
from arena.selectors import model_endpoint
from battles.models import Battle, Response, ResponseStatus

logger = logging.getLogger(__name__)

UNEXPECTED_FAILURE = "The answer could not be generated because of an unexpected error."
PARTIAL_TTL_SECONDS = 900


def battle_group(battle_id) -> str:
    return f"battle.{battle_id}"


def partial_key(response_id) -> str:
    return f"arena:battle-partial:{response_id}"


def conversation_for(battle: Battle, slot: str, turn) -> list[dict[str, str]]:
    """The model's own conversation: the person's prompts and its own earlier answers only."""
    messages: list[dict[str, str]] = []
    if turn.index > 1:  # the first turn needs no query: it is just the prompt
        earlier = battle.turns.filter(index__lt=turn.index).prefetch_related("responses")
        for previous in earlier:
            own = next(r for r in previous.responses.all() if r.slot == slot)
            messages.append({"role": "user", "content": previous.prompt})
            messages.append({"role": "assistant", "content": own.text})
    messages.append({"role": "user", "content": turn.prompt})
    return messages


class StreamRelay:
    """Publishes one response's chunks to the page and keeps a catch-up snapshot."""

    def __init__(self, *, battle_id, response_id, position: str) -> None:
        self.group = battle_group(battle_id)
        self.response_id = str(response_id)
        self.position = position
        # Microseconds since the epoch: a redelivered job (a worker died mid-answer)
        # continues above every number an earlier attempt sent.
        self.seq = time.time_ns() // 1000
        self.text = ""
        # A layer of its own: worker threads each run an event loop, and closing a
        # shared layer's pools would close other loops' connections.
        self.layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        self.redis = aioredis.from_url(settings.REDIS_URL)  # created lazily per event loop

    async def _publish(self, event: str, **payload) -> None:
        message = {"event": event, "response": self.response_id, "position": self.position,
                   **payload}
        await self.layer.group_send(self.group, {"type": "battle.event", "message": message})

    async def _snapshot(self) -> None:
        snapshot = json.dumps({"seq": self.seq, "text": self.text})
        await self.redis.set(partial_key(self.response_id), snapshot, ex=PARTIAL_TTL_SECONDS)

    async def delta(self, chunk: str) -> None:
        self.seq += 1
        self.text += chunk
        await self._snapshot()
        await self._publish("delta", seq=self.seq, text=chunk)

    async def restart(self) -> None:
        self.seq += 1
        self.text = ""
        await self._snapshot()
        await self._publish("restart", seq=self.seq)

    async def finish(self, event: str, **payload) -> None:
        self.redis = aioredis.from_url(settings.REDIS_URL)
        try:
            await self.redis.delete(partial_key(self.response_id))
            await self._publish(event, **payload)
        finally:
            await self.close_layer()

    async def close_layer(self) -> None:
        """Connections belong to the event loop that opened them; close them with it."""
        await self.redis.aclose()
        close_pools = getattr(self.layer, "close_pools", None)
        if close_pools:
            await close_pools()


def response_generate(*, response_id: str, generation: int) -> None:
    """Generate one answer; a stale or already finished job does nothing."""
    response = Response.objects.select_related(
        "turn__battle__model_a", "turn__battle__model_b"
    ).get(pk=response_id)
    if response.generation != generation or response.status in (
        ResponseStatus.DONE, ResponseStatus.FAILED
    ):
        logger.info("response %s: nothing to do (generation %s)", response_id, generation)
        return
    battle = response.turn.battle
    model = battle.model_in(response.slot)
    messages = conversation_for(battle, response.slot, response.turn)
    # A first job for a fresh answer has nothing on any page to wipe; a redelivered
    # or retried one may, so it tells the page to start the text over.
    fresh = generation == 0 and response.status == ResponseStatus.PENDING
    if not _claim(response, generation):
        return
    relay = StreamRelay(battle_id=battle.id, response_id=response.id,
                        position=battle.position_of(response.slot))
    completion, error = asyncio.run(
        _stream(relay, model_endpoint(model), messages, announce_restart=not fresh)
    )
    # Save first, then announce: whoever hears "done" finds the answer in the database.
    if completion is not None:
        if _save_success(response.id, generation, completion):
            asyncio.run(relay.finish("done"))
    else:
        _save_failure(response.id, generation, error)
        asyncio.run(relay.finish("failed", error=error))


async def _stream(relay: StreamRelay, endpoint, messages, *, announce_restart: bool):
    try:
        if announce_restart:
            await relay.restart()
        completion = await stream_chat(
            endpoint, messages, on_delta=relay.delta, on_restart=relay.restart
        )
        return completion, None
    except LLMError as exc:
        logger.error("%s failed: %s", relay.response_id, exc.user_message)
        return None, exc.user_message
    except Exception:
        logger.exception("%s failed unexpectedly", relay.response_id)
        return None, UNEXPECTED_FAILURE
    finally:
        await relay.close_layer()


def _claim(response: Response, generation: int) -> bool:
    updated = Response.objects.filter(pk=response.pk, generation=generation).exclude(
        status__in=[ResponseStatus.DONE, ResponseStatus.FAILED]
    ).update(status=ResponseStatus.STREAMING, attempts=0)
    return bool(updated)


def _save_success(response_id, generation: int, completion) -> bool:
    with transaction.atomic():
        return bool(
            Response.objects.filter(pk=response_id, generation=generation).update(
                status=ResponseStatus.DONE,
                text=completion.text,
                error="",
                latency_ms=completion.latency_ms,
                ttft_ms=completion.ttft_ms,
                input_tokens=completion.input_tokens,
                output_tokens=completion.output_tokens,
                cost_usd=completion.cost_usd,
                attempts=completion.attempts,
            )
        )


def _save_failure(response_id, generation: int, message: str) -> None:
    Response.objects.filter(pk=response_id, generation=generation).update(
        status=ResponseStatus.FAILED, error=message[:300]
    )

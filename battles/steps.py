"""Generating one side's answer: claim the step, stream from the provider, relay, save.

Runs inside a Celery task (:mod:`battles.tasks`); the stream runs on the process's I/O loop
(:mod:`arena.aio`) while the step's lease is kept alive, and the database connection is given
back for the length of the call.
"""

from __future__ import annotations

import logging

from arena import aio
from arena.llm import LLMError, stream_chat
from arena.queries import one_or_none
from arena.selectors import model_endpoint_by_slug
from arena.steps import (
    FINISHED,
    StepStatus,
    release_database,
    step_claim,
    step_lease,
    step_save,
)
from arena.streaming import StreamStopped
from battles.models import Battle, Response, Slot
from battles.streams import response_relay

logger = logging.getLogger(__name__)

UNEXPECTED_FAILURE = "The answer could not be generated because of an unexpected error."


def conversation_for(battle_id, slot: str, index: int, prompt: str) -> list[dict[str, str]]:
    """The model's own conversation: the person's prompts and its own earlier answers only."""
    messages: list[dict[str, str]] = []
    if index > 1:  # the first turn needs no query: it is just the prompt
        earlier = Response.objects.filter(turn__battle_id=battle_id, turn__index__lt=index,
                                          slot=slot).order_by("turn__index")
        for previous_prompt, own_text in earlier.values_list("turn__prompt", "text"):
            messages.append({"role": "user", "content": previous_prompt})
            messages.append({"role": "assistant", "content": own_text})
    messages.append({"role": "user", "content": prompt})
    return messages


def response_generate(*, response_id: str, generation: int) -> None:
    """Generate one answer; a stale, finished or already running job does nothing."""
    row = one_or_none(Response.objects.filter(pk=response_id).values(
        "generation", "status", "slot", "turn__index", "turn__prompt", "turn__battle_id",
        "turn__battle__model_a_id", "turn__battle__model_b_id",
        "turn__battle__model_a_position"))
    if row is None or row["generation"] != generation or row["status"] in FINISHED:
        logger.info("response %s: nothing to do (generation %s)", response_id, generation)
        return
    slot = row["slot"]
    battle = Battle(id=row["turn__battle_id"],
                    model_a_position=row["turn__battle__model_a_position"])
    endpoint = model_endpoint_by_slug(row["turn__battle__model_a_id"] if slot == Slot.A
                                      else row["turn__battle__model_b_id"])
    messages = conversation_for(battle.id, slot, row["turn__index"], row["turn__prompt"])
    # A first job for a fresh answer has nothing on any page to wipe; a retried or restarted
    # one may, so it tells the page to start the text over.
    fresh = generation == 0
    if not step_claim(Response, response_id, generation):
        return
    response = Response(id=response_id, slot=slot)
    relay = response_relay(battle, response)
    release_database()
    with step_lease(Response, response.pk, generation):
        completion, error = aio.run(_stream(relay, endpoint, messages, restart=not fresh))
    if relay.stopped:  # the person stopped it: the stop saved what was written
        logger.info("%s stopped by the person", relay.stream_id)
        return
    # Save first, then announce: whoever hears "done" finds the answer in the database.
    if completion is not None:
        if step_save(Response, response.pk, generation, status=StepStatus.DONE,
                     text=completion.text, error="", ttft_ms=completion.ttft_ms,
                     cut_at_limit=completion.cut_at_limit,
                     **response.usage_fields(completion),
                     **response.style_fields(completion.text)):
            aio.run(relay.finish("done"))
    elif step_save(Response, response.pk, generation, status=StepStatus.FAILED,
                   error=error[:300]):
        aio.run(relay.finish("failed", error=error))


async def _stream(relay, endpoint, messages, *, restart: bool):
    try:
        if restart:
            await relay.restart()
        completion = await stream_chat(
            endpoint, messages, on_delta=relay.delta, on_restart=relay.restart
        )
        return completion, None
    except StreamStopped:
        return None, None
    except LLMError as exc:
        logger.error("%s failed: %s", relay.stream_id, exc.user_message)
        return None, exc.user_message
    except Exception:
        logger.exception("%s failed unexpectedly", relay.stream_id)
        return None, UNEXPECTED_FAILURE

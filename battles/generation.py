"""Generating one side's answer: claim the step, stream from the provider, relay, save.

Runs inside a Celery task (:mod:`battles.tasks`); the stream runs on the process's I/O loop
(:mod:`arena.aio`) while the step's lease is kept alive, and the database connection is given
back for the length of the call.
"""

from __future__ import annotations

import logging

from arena import aio
from arena.llm import LLMError, stream_chat
from arena.selectors import model_endpoint
from arena.steps import (
    FINISHED,
    StepStatus,
    release_database,
    step_claim,
    step_lease,
    step_save,
)
from battles.models import Battle, Response
from battles.streams import response_relay

logger = logging.getLogger(__name__)

UNEXPECTED_FAILURE = "The answer could not be generated because of an unexpected error."


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


def response_generate(*, response_id: str, generation: int) -> None:
    """Generate one answer; a stale, finished or already running job does nothing."""
    response = Response.objects.select_related(
        "turn__battle__model_a", "turn__battle__model_b"
    ).get(pk=response_id)
    if response.generation != generation or response.status in FINISHED:
        logger.info("response %s: nothing to do (generation %s)", response_id, generation)
        return
    battle = response.turn.battle
    endpoint = model_endpoint(battle.model_in(response.slot))
    messages = conversation_for(battle, response.slot, response.turn)
    # A first job for a fresh answer has nothing on any page to wipe; a retried or restarted
    # one may, so it tells the page to start the text over.
    fresh = generation == 0
    if not step_claim(Response, response.pk, generation):
        return
    relay = response_relay(battle, response)
    release_database()
    with step_lease(Response, response.pk, generation):
        completion, error = aio.run(_stream(relay, endpoint, messages, restart=not fresh))
    # Save first, then announce: whoever hears "done" finds the answer in the database.
    if completion is not None:
        if step_save(Response, response.pk, generation, status=StepStatus.DONE,
                     text=completion.text, error="", ttft_ms=completion.ttft_ms,
                     **response.usage_fields(completion)):
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
    except LLMError as exc:
        logger.error("%s failed: %s", relay.stream_id, exc.user_message)
        return None, exc.user_message
    except Exception:
        logger.exception("%s failed unexpectedly", relay.stream_id)
        return None, UNEXPECTED_FAILURE

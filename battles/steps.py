"""The step of text battles: one side's answer, streamed from its provider through the relay.

Run by :func:`arena.steps.step_run` from a Celery task (:mod:`battles.tasks`): the stream runs
on the process's I/O loop (:mod:`arena.aio`) outside any transaction while the step's lease is
kept alive; an answer has no next step, its end is announced once it is saved.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction

from arena import aio
from arena.llm import LLMError, ModelEndpoint, stream_chat
from arena.selectors import model_endpoint_by_slug
from arena.steps import StepResult, StepStatus, StepWork, step_run
from arena.streaming import StreamRelay, StreamStopped
from battles.models import Battle, Response, Slot
from battles.services import stopped_answer_keep_written
from battles.streams import response_relay

logger = logging.getLogger(__name__)


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


@dataclass
class Job:
    relay: StreamRelay
    endpoint: ModelEndpoint
    messages: list[dict[str, str]]
    restart: bool


def response_load(response_id) -> Job:
    row = Response.objects.values(
        "generation", "slot", "turn__index", "turn__prompt", "turn__battle_id",
        "turn__battle__model_a_id", "turn__battle__model_b_id",
        "turn__battle__model_a_position").get(pk=response_id)
    slot = row["slot"]
    battle = Battle(id=row["turn__battle_id"],
                    model_a_position=row["turn__battle__model_a_position"])
    endpoint = model_endpoint_by_slug(row["turn__battle__model_a_id"] if slot == Slot.A
                                      else row["turn__battle__model_b_id"])
    # A first job for a fresh answer has nothing on any page to wipe; a retried or restarted
    # one may, so it tells the page to start the text over.
    return Job(relay=response_relay(battle, Response(id=response_id, slot=slot)),
               endpoint=endpoint,
               messages=conversation_for(battle.id, slot, row["turn__index"],
                                         row["turn__prompt"]),
               restart=row["generation"] > 0)


def response_work(job: Job) -> StepResult | None:
    """Stream the answer through the relay; None if the person stopped it (the stop saved
    what was written, or less when Redis had just lost it: then what the pages were sent)."""
    completion, error, stopped = None, "", False
    try:
        completion = aio.run(_stream(job))
    except StreamStopped:
        stopped = True
    except LLMError as exc:
        logger.error("%s failed: %s", job.relay.stream_id, exc.user_message)
        error = exc.blind_message  # shown before the vote: the same for either side
    if stopped or job.relay.stopped:
        logger.info("%s stopped by the person", job.relay.stream_id)
        stopped_answer_keep_written(response_id=job.relay.stream_id,
                                    written=job.relay.written)
        return None
    if completion is None:
        return StepResult(error=error)
    return StepResult(fields={
        "text": completion.text, "ttft_ms": completion.ttft_ms,
        "cut_at_limit": completion.cut_at_limit, **Response().usage_fields(completion),
        **Response.style_fields(completion.text)})


async def _stream(job: Job):
    if job.restart:
        await job.relay.restart()
    completion = await stream_chat(job.endpoint, job.messages, on_delta=job.relay.delta,
                                   on_restart=job.relay.restart)
    # The last chunks wait for the relay's timer: sent now, before the answer is saved and
    # its end announced, so that a page never hears "done" before the answer's last words.
    await job.relay.flush()
    return completion


def response_advance(response: Response) -> None:
    """An answer has no next step: its page and a waiting API call hear it ended, once the
    save is committed (whoever hears "done" finds the answer in the database)."""
    battle = Battle.objects.only("id", "model_a_position").get(turns__responses=response)
    relay = response_relay(battle, response)
    if response.status == StepStatus.DONE:
        transaction.on_commit(lambda: aio.run(relay.finish("done")))
    else:
        transaction.on_commit(lambda: aio.run(relay.finish("failed", error=response.error)))


RESPONSE = StepWork(Response, load=response_load, work=response_work,
                    advance=response_advance)


def response_run(*, response_id: str, generation: int) -> None:
    """Generate one answer; a stale, finished or already running job does nothing."""
    step_run(RESPONSE, response_id, generation)

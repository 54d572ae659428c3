"""The steps of a debate's state machine, each run by :func:`arena.steps.step_run`.

A step starts only while its debate runs (a paused debate's step waits for the resume). Its
work (a moderator's note, a turn streamed to the page, a fact-check, the judging) runs outside
any transaction; then, in one transaction, the step is saved (only if its generation is
still current), what it produced is written, and the debate moves on: the next step is
created (:func:`debates.services.debate_next`), or the debate fails with the step's reason.
A task redelivered after its step finished only makes sure the next step exists: nothing is
ever written twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction

from arena import aio
from arena.contests.leaks import leaked_identity
from arena.llm import ChatMessage, LLMError, ModelEndpoint, estimate_tokens, stream_chat
from arena.models import AIModel
from arena.selectors import model_endpoint
from arena.steps import StepResult, StepStatus, StepWork, step_run
from arena.streaming import StreamRelay
from debates import services
from debates.evidence import SearchBackend
from debates.factcheck import TurnReport, check_speech, factuality
from debates.judging import JudgeResult, Speech, judge_both_orders
from debates.lineup import fact_checker_for, judges_for
from debates.models import (
    Debate,
    DebateStatus,
    DebateStep,
    DebateTurn,
    FactCheck,
    StepKind,
)
from debates.search import search_backend
from debates.speeches import (
    HANDICAPS,
    STRONG_NOTE,
    SpeakerBrief,
    compact_own_words_messages,
    compact_revision_messages,
    compact_system,
    compact_turn_messages,
    cut_to_words,
    parse_compact,
    parse_turn,
    revision_messages,
    turn_messages,
)
from debates.streams import turn_relay
from debates.verdicts import debate_record_verdicts

logger = logging.getLogger(__name__)

RUNNING_STATUSES = (DebateStatus.INITIALIZING, DebateStatus.IN_PROGRESS)
TURN_EXTRA_TOKENS = 350  # room for <reflection> and <critique> besides the speech
COMPACT_EXTRA_TOKENS = 40  # a compact turn is the speech alone
EMPTY_SPEECH = "The debater sent an empty speech."


@dataclass
class Job:
    """A loaded step: its kind's work and what that work needs."""

    work: Callable[[Any], StepResult]
    inputs: Any


def debate_step_may_start(step_id) -> bool:
    """Only while its debate runs: a paused debate's step is sent again by the resume."""
    return DebateStep.objects.filter(pk=step_id, debate__status__in=RUNNING_STATUSES).exists()


def debate_step_load(step_id) -> Job:
    step = DebateStep.objects.select_related(
        "debate", "debate__topic", "debate__model_a", "debate__model_b", "debate__persona_a",
        "debate__persona_b", "debate__judge_model").get(pk=step_id)
    load, work = KINDS[step.kind]
    return Job(work=work, inputs=load(step, step.debate))


def debate_step_work(job: Job) -> StepResult:
    return job.work(job.inputs)


def debate_step_advance(step: DebateStep) -> None:
    """The next step, or the debate fails with the reason of the step that failed."""
    logger.info("debate %s: %s %s", step.debate_id, step, step.status)
    if step.status == StepStatus.DONE:
        services.debate_next(debate_id=step.debate_id)
    else:
        services.debate_fail(debate_id=step.debate_id, reason=f"{step}: {step.error}".strip())


STEP = StepWork(DebateStep, load=debate_step_load, work=debate_step_work,
                advance=debate_step_advance, may_start=debate_step_may_start)


def debate_step_run(*, step_id: str, generation: int) -> None:
    step_run(STEP, step_id, generation)


def _produced(debate_id, *, write: Callable[[], None] | None = None, tokens: int = 0,
              cost_usd: float = 0.0, side: str = "") -> Callable[[], None]:
    """What a step writes when it is saved: its rows and its usage (``side`` "a" / "b": whose
    tokens these are; "" the judge's or the checker's)."""
    def produced() -> None:
        if write is not None:
            write()
        services.debate_add_usage(debate_id=debate_id, side=side, tokens=tokens,
                                  cost_usd=cost_usd)
    return produced


# --- moderator -------------------------------------------------------------------------------


def moderator_load(step: DebateStep, debate: Debate) -> str:
    """The moderator's words (nothing to ask a model)."""
    if step.round == 1:
        return (f"Welcome to the debate on the motion: \u201c{debate.topic.motion}\u201d. "
                f"{debate.persona_of('pro').name} argues for, "
                f"{debate.persona_of('con').name} against. {debate.rounds} round"
                f"{'s' if debate.rounds != 1 else ''}, at most {debate.word_limit} words a "
                f"turn{'; every claim is fact-checked' if debate.fact_checking else ''}.")
    return f"Round {step.round} of {debate.rounds}. Pro speaks first."


def moderator_work(note: str) -> StepResult:
    return StepResult(fields={"note": note})


# --- turns -------------------------------------------------------------------------------------


def _coaching(debate: Debate, step: DebateStep) -> str:
    """Calibration debates only: the strong side's note or the weak side's handicap (a
    planted claim per round, in turn)."""
    if not debate.handicapped:
        return ""
    if step.position != debate.handicapped:
        return STRONG_NOTE
    text = HANDICAPS[debate.handicap]
    if debate.planted:
        text = text.format(claim=debate.planted[(step.round - 1) % len(debate.planted)])
    return text


def _brief(debate: Debate, step: DebateStep) -> SpeakerBrief:
    persona = debate.persona_of(step.position)
    return SpeakerBrief(
        coaching=_coaching(debate, step),
        name=persona.name, description=persona.description, background=persona.background,
        traits=list(persona.traits), speaking_style=persona.speaking_style,
        motion=debate.topic.motion, position=step.position, round=step.round,
        rounds=debate.rounds, word_limit=debate.word_limit)


def _transcript(debate: Debate, budget_tokens: int) -> list[tuple[str, str, str]]:
    """Earlier speeches, newest kept first when the model cannot read them all."""
    speeches = list(debate.turns.order_by("round", "created_at")
                    .values_list("round", "position", "speech"))
    kept: list[tuple[str, str, str]] = []
    for round_, position, speech in reversed(speeches):
        budget_tokens -= estimate_tokens(speech) + 10
        if budget_tokens < 0:
            break
        kept.insert(0, (f"Round {round_}", position, speech))
    return kept


def _turn_endpoint(debate: Debate, position: str):
    model = debate.model_of(position)
    endpoint = model_endpoint(model)
    extra = COMPACT_EXTRA_TOKENS if model.is_local else TURN_EXTRA_TOKENS
    wanted = round(debate.word_limit * 1.6) + extra
    return replace(endpoint, max_tokens=max(endpoint.max_tokens, wanted)), model


def _opponent_last(debate: Debate, position: str) -> str | None:
    """The other side's latest speech, for a compact turn."""
    other = "con" if position == "pro" else "pro"
    turn = debate.turns.filter(position=other).order_by("-round").first()
    return turn.speech if turn else None


def _false_findings(existing: DebateTurn) -> list[str]:
    return [f"\u201c{c.claim}\u201d: {c.explanation}"
            for c in existing.fact_checks.filter(revision=0, verdict="false")]


def _compact_messages(debate: Debate, step: DebateStep, brief: SpeakerBrief,
                      existing: DebateTurn | None) -> list[ChatMessage]:
    """An embedded model's turn (:func:`debates.speeches.compact_turn_messages`)."""
    messages = compact_turn_messages(brief, _opponent_last(debate, step.position))
    if existing is None:
        return messages
    return compact_revision_messages(messages, existing.raw, _false_findings(existing),
                                     debate.word_limit)


def _full_messages(debate: Debate, step: DebateStep, brief: SpeakerBrief, model,
                   existing: DebateTurn | None, max_tokens: int) -> list[ChatMessage]:
    """A capable model's Reflect-Critique-Refine turn over the debate so far."""
    budget = max((model.context_tokens or 4096) - max_tokens - 900, 200)
    if existing is None:
        return turn_messages(brief, _transcript(debate, budget))
    earlier = [t for t in _transcript(debate, budget)
               if not (t[0] == f"Round {step.round}" and t[1] == step.position)]
    return revision_messages(turn_messages(brief, earlier), existing.raw,
                             _false_findings(existing), debate.word_limit)


@dataclass
class TurnJob:
    step: DebateStep
    endpoint: ModelEndpoint
    speaker: AIModel
    messages: list[ChatMessage]
    existing: DebateTurn | None  # the speech a strict-mode revision rewrites
    relay: StreamRelay
    word_limit: int
    debaters: list[AIModel]
    heard: list[str]  # the debate as it reads without this speech: the motion, the others
    side: str
    compact: bool  # an embedded small model's turn: the speech alone
    retry: list[ChatMessage] | None = None  # a compact turn asked again after an echo


def turn_load(step: DebateStep, debate: Debate) -> TurnJob:
    endpoint, model = _turn_endpoint(debate, step.position)
    brief = _brief(debate, step)
    compact = model.is_local  # the embedded small models: the compact turn
    existing = (DebateTurn.objects.get(debate=debate, round=step.round, position=step.position)
                if step.revision else None)
    messages = (_compact_messages(debate, step, brief, existing) if compact
                else _full_messages(debate, step, brief, model, existing, endpoint.max_tokens))
    retry = None
    if compact:
        endpoint = replace(endpoint, system_prompt=compact_system(brief))
        retry = compact_own_words_messages(brief, _opponent_last(debate, step.position))
    return TurnJob(step=step, endpoint=endpoint, speaker=model, messages=messages,
                   existing=existing, relay=turn_relay(step), word_limit=debate.word_limit,
                   debaters=[debate.model_a, debate.model_b],
                   heard=[debate.topic.motion, *DebateTurn.objects.filter(debate=debate).exclude(
                       round=step.round, position=step.position).values_list("speech",
                                                                              flat=True)],
                   side=debate.side_of(step.position), compact=compact, retry=retry)


async def _stream_turn(relay: StreamRelay, endpoint, messages: list[ChatMessage], restart: bool):
    if restart:
        await relay.restart()
    completion = await stream_chat(endpoint, messages, on_delta=relay.delta,
                                   on_restart=relay.restart)
    await relay.flush()
    return completion


def turn_work(job: TurnJob) -> StepResult:
    step, relay = job.step, job.relay

    def ended(event: str, **payload) -> Callable[[], None]:
        return lambda: transaction.on_commit(lambda: aio.run(relay.finish(event, **payload)))

    prompt = [job.endpoint.system_prompt, *(m["content"] for m in job.messages)]
    messages, restart = job.messages, step.generation > 0 or step.revision > 0
    # A small model's reply can be nothing but what it was told (all of it taken off as an
    # echo): it is asked once more, in its own words, before the turn fails.
    for attempt in range(2 if job.retry else 1):
        try:
            completion = aio.run(_stream_turn(relay, job.endpoint, messages,
                                              restart=restart or attempt > 0))
        except LLMError as exc:  # said to every viewer: the same words for either side
            logger.warning("debate %s: %s failed: %s", step.debate_id, step, exc.user_message)
            return StepResult(error=exc.blind_message,
                              write=ended("failed", error=exc.blind_message))
        parsed = (parse_compact(completion.text, prompt=prompt) if job.compact
                  else parse_turn(completion.text))
        speech, cut = cut_to_words(parsed.speech, job.word_limit)
        if speech.strip():
            break
        messages = job.retry
        prompt = [*prompt, *(m["content"] for m in messages)]
    if not speech.strip():
        return StepResult(error=EMPTY_SPEECH, write=ended("failed", error=EMPTY_SPEECH))
    leak = (leaked_identity([*job.heard, completion.text], job.debaters) or "")[:100]
    fields = {"reflection": parsed.reflection, "critique": parsed.critique, "speech": speech,
              "raw": completion.text, "tags_missing": parsed.tags_missing,
              "cut_at_word_limit": cut, "names_model": leak,
              "input_tokens": completion.input_tokens,
              "output_tokens": completion.output_tokens, "latency_ms": completion.latency_ms}

    def write() -> None:
        if job.existing is None:
            DebateTurn.objects.create(debate_id=step.debate_id, round=step.round,
                                      position=step.position, speaker=job.speaker, **fields)
        else:
            DebateTurn.objects.filter(pk=job.existing.pk).update(
                revised=True, first_speech=job.existing.speech, **fields)
        ended("done")()

    return StepResult(fields=step.usage_fields(completion), write=_produced(
        step.debate_id, write=write, tokens=completion.input_tokens + completion.output_tokens,
        cost_usd=completion.cost_usd, side=job.side))


# --- fact-checks --------------------------------------------------------------------------------


@dataclass
class FactCheckJob:
    step: DebateStep
    turn: DebateTurn
    endpoint: ModelEndpoint
    backend: SearchBackend


def fact_check_load(step: DebateStep, debate: Debate) -> FactCheckJob:
    return FactCheckJob(
        step=step, turn=DebateTurn.objects.get(debate=debate, round=step.round,
                                               position=step.position),
        endpoint=model_endpoint(fact_checker_for(debate, step.position)),
        backend=search_backend())


def fact_check_work(job: FactCheckJob) -> StepResult:
    step, turn, backend = job.step, job.turn, job.backend
    report: TurnReport = aio.run(check_speech(job.endpoint, backend, turn.speech))

    def write() -> None:
        FactCheck.objects.filter(turn=turn, revision=step.revision).delete()
        FactCheck.objects.bulk_create([
            FactCheck(turn=turn, revision=step.revision, claim=r.claim.text,
                      claim_type=r.claim.type, claim_confidence=r.claim.confidence,
                      verdict=r.verdict, evidence=[e.as_dict() for e in r.evidence],
                      confidence=r.confidence, explanation=r.explanation,
                      backend=backend.name, latency_ms=r.latency_ms)
            for r in report.results])
        score = factuality([r.verdict for r in report.results])
        DebateTurn.objects.filter(pk=turn.pk).update(factuality=score)
        services.debate_factuality_refresh(debate_id=step.debate_id)

    return StepResult(fields={"note": report.note[:1000]}, write=_produced(
        step.debate_id, write=write, tokens=report.tokens, cost_usd=report.cost_usd))


# --- judging ----------------------------------------------------------------------------------


def _speeches(debate: Debate) -> list[Speech]:
    return [Speech(r, p, s) for r, p, s in
            debate.turns.order_by("round").values_list("round", "position", "speech")]


def _fact_check_lines(debate: Debate) -> list[str]:
    rows = FactCheck.objects.filter(turn__debate=debate).order_by("turn__round", "created_at")
    return [f"- ROUND {round_} {position.upper()}: \u201c{claim}\u201d \u2192 {verdict}"
            for round_, position, claim, verdict in rows.values_list(
                "turn__round", "turn__position", "claim", "verdict")]


@dataclass
class JudgeJob:
    debate_id: Any
    motion: str
    speeches: list[Speech]
    checks: list[str]
    judges: list[tuple[str, Any]]  # (role, model)


def judge_load(step: DebateStep, debate: Debate) -> JudgeJob:
    return JudgeJob(debate_id=debate.pk, motion=debate.topic.motion, speeches=_speeches(debate),
                    checks=_fact_check_lines(debate), judges=judges_for(debate))


def judge_work(job: JudgeJob) -> StepResult:
    results: list[tuple[str, object, JudgeResult]] = []
    for role, judge in job.judges:
        if role == "tiebreaker":
            continue
        pair = aio.run(judge_both_orders(model_endpoint(judge), job.motion, job.speeches,
                                         job.checks))
        results += [(role, judge, r) for r in pair]
        if all(r.winner for r in pair):
            break
    tiebreaker = dict(job.judges).get("tiebreaker")
    valid = [r for _, _, r in results if r.winner]
    if len(valid) >= 2 and valid[-1].winner != valid[-2].winner and tiebreaker is not None:
        pair = aio.run(judge_both_orders(model_endpoint(tiebreaker), job.motion, job.speeches,
                                         job.checks))
        results += [("tiebreaker", tiebreaker, r) for r in pair]

    def write() -> None:
        debate_record_verdicts(debate_id=job.debate_id, results=results)

    return StepResult(write=_produced(job.debate_id, write=write,
                                      tokens=sum(r.tokens for _, _, r in results),
                                      cost_usd=sum(r.cost_usd for _, _, r in results)))


KINDS: dict[str, tuple[Callable[[DebateStep, Debate], Any], Callable[[Any], StepResult]]] = {
    StepKind.MODERATOR: (moderator_load, moderator_work),
    StepKind.TURN: (turn_load, turn_work),
    StepKind.FACT_CHECK: (fact_check_load, fact_check_work),
    StepKind.JUDGE: (judge_load, judge_work),
}

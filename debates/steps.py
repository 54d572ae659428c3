"""The steps of a debate's state machine: one step per Celery task.

:func:`debate_step_run` loads the step, does nothing if it is stale, finished or its debate
is paused or over, claims it (platform step: lease and heartbeat while the model works),
runs the step's work *outside* any transaction, then in one transaction saves the step (only
if its generation is still current), writes what the step produced and creates the next
step (:func:`debates.services.debate_next`). A task redelivered after its worker died
either finds the step started over by the sweep (new generation) or finished, in which case
it only makes sure the next step exists: nothing is ever written twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from django.db import transaction

from arena import aio
from arena.contests.leaks import leaked_identity
from arena.llm import ChatMessage, LLMError, estimate_tokens, stream_chat
from arena.queries import one_or_none
from arena.selectors import model_endpoint
from arena.steps import FINISHED, StepStatus, release_database, step_claim, step_lease, step_save
from arena.streaming import StreamRelay
from debates import services
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
    compact_revision_messages,
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

UNEXPECTED_FAILURE = "The step failed because of an unexpected error."
RUNNING_STATUSES = (DebateStatus.INITIALIZING, DebateStatus.IN_PROGRESS)
TURN_EXTRA_TOKENS = 350  # room for <reflection> and <critique> besides the speech
COMPACT_EXTRA_TOKENS = 40  # a compact turn is the speech alone


@dataclass
class Outcome:
    """What a step produced: written, with the next step, in the step's transaction."""

    ok: bool
    error: str = ""
    write: Callable[[], None] | None = None
    fields: dict = field(default_factory=dict)  # the step row's own columns
    tokens: int = 0
    cost_usd: float = 0.0
    side: str = ""  # "a" / "b": whose tokens these are ("" = the judge's or checker's)


def debate_step_run(*, step_id: str, generation: int) -> None:
    step = one_or_none(DebateStep.objects.select_related(
        "debate", "debate__topic", "debate__model_a", "debate__model_b", "debate__persona_a",
        "debate__persona_b", "debate__judge_model").filter(pk=step_id))
    if step is None or step.generation != generation:
        return
    debate = step.debate
    if step.status in FINISHED:
        services.debate_next(debate_id=debate.pk)  # a redelivered job: make sure it moved on
        return
    if debate.status not in RUNNING_STATUSES or not step_claim(DebateStep, step.pk, generation):
        return  # paused (resume sends it again), over, or another job has it
    release_database()
    with step_lease(DebateStep, step.pk, generation):
        try:
            outcome = RUNNERS[step.kind](step, debate)
        except Exception:
            logger.exception("debate %s: step %s failed unexpectedly", debate.pk, step)
            outcome = Outcome(ok=False, error=UNEXPECTED_FAILURE)
    with transaction.atomic():
        saved = step_save(DebateStep, step.pk, generation,
                          status=StepStatus.DONE if outcome.ok else StepStatus.FAILED,
                          error=outcome.error[:300], **outcome.fields)
        if not saved:
            return  # started over meanwhile: the newer job writes
        if outcome.write is not None:
            outcome.write()
        services.debate_add_usage(debate_id=debate.pk, side=outcome.side,
                                  tokens=outcome.tokens, cost_usd=outcome.cost_usd)
        if outcome.ok:
            services.debate_next(debate_id=debate.pk)
        else:
            services.debate_fail(debate_id=debate.pk,
                                 reason=f"{step}: {outcome.error}".strip())
    logger.info("debate %s: %s %s", debate.pk, step, "done" if outcome.ok else "failed")


# --- moderator -------------------------------------------------------------------------------


def run_moderator(step: DebateStep, debate: Debate) -> Outcome:
    if step.round == 1:
        note = (f"Welcome to the debate on the motion: \u201c{debate.topic.motion}\u201d. "
                f"{debate.persona_of('pro').name} argues for, "
                f"{debate.persona_of('con').name} against. {debate.rounds} round"
                f"{'s' if debate.rounds != 1 else ''}, at most {debate.word_limit} words a "
                f"turn{'; every claim is fact-checked' if debate.fact_checking else ''}.")
    else:
        note = f"Round {step.round} of {debate.rounds}. Pro speaks first."
    return Outcome(ok=True, fields={"note": note})


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


async def _stream_turn(relay: StreamRelay, endpoint, messages: list[ChatMessage], restart: bool):
    if restart:
        await relay.restart()
    completion = await stream_chat(endpoint, messages, on_delta=relay.delta,
                                   on_restart=relay.restart)
    await relay.flush()
    return completion


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


def run_turn(step: DebateStep, debate: Debate) -> Outcome:
    endpoint, model = _turn_endpoint(debate, step.position)
    brief = _brief(debate, step)
    compact = model.is_local  # the embedded small models: the compact turn
    existing = (DebateTurn.objects.get(debate=debate, round=step.round, position=step.position)
                if step.revision else None)
    messages = (_compact_messages(debate, step, brief, existing) if compact
                else _full_messages(debate, step, brief, model, existing, endpoint.max_tokens))
    relay = turn_relay(step)
    try:
        completion = aio.run(_stream_turn(relay, endpoint, messages,
                                          restart=step.generation > 0 or step.revision > 0))
    except LLMError as exc:
        aio.run(relay.finish("failed", error=exc.user_message))
        return Outcome(ok=False, error=exc.user_message)
    parsed = parse_compact(completion.text) if compact else parse_turn(completion.text)
    speech, cut = cut_to_words(parsed.speech, debate.word_limit)
    if not speech.strip():
        aio.run(relay.finish("failed", error="The debater sent an empty speech."))
        return Outcome(ok=False, error="The debater sent an empty speech.")
    others = [debate.model_a, debate.model_b]
    leak = (leaked_identity([completion.text], others) or "")[:100]
    fields = {"reflection": parsed.reflection, "critique": parsed.critique, "speech": speech,
              "raw": completion.text, "tags_missing": parsed.tags_missing,
              "cut_at_word_limit": cut, "names_model": leak,
              "input_tokens": completion.input_tokens,
              "output_tokens": completion.output_tokens, "latency_ms": completion.latency_ms}

    def write() -> None:
        if existing is None:
            DebateTurn.objects.create(debate_id=debate.pk, round=step.round,
                                      position=step.position, speaker=model, **fields)
        else:
            DebateTurn.objects.filter(pk=existing.pk).update(
                revised=True, first_speech=existing.speech, **fields)
        transaction.on_commit(lambda: aio.run(relay.finish("done")))

    return Outcome(ok=True, write=write, fields=step.usage_fields(completion),
                   tokens=completion.input_tokens + completion.output_tokens,
                   cost_usd=completion.cost_usd, side=debate.side_of(step.position))


# --- fact-checks --------------------------------------------------------------------------------


def run_fact_check(step: DebateStep, debate: Debate) -> Outcome:
    turn = DebateTurn.objects.get(debate=debate, round=step.round, position=step.position)
    endpoint = model_endpoint(fact_checker_for(debate, step.position))
    backend = search_backend()
    report: TurnReport = aio.run(check_speech(endpoint, backend, turn.speech))

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
        services.debate_factuality_refresh(debate_id=debate.pk)

    return Outcome(ok=True, write=write, fields={"note": report.note[:1000]},
                   tokens=report.tokens, cost_usd=report.cost_usd)


# --- judging ----------------------------------------------------------------------------------


def _speeches(debate: Debate) -> list[Speech]:
    return [Speech(r, p, s) for r, p, s in
            debate.turns.order_by("round").values_list("round", "position", "speech")]


def _fact_check_lines(debate: Debate) -> list[str]:
    rows = FactCheck.objects.filter(turn__debate=debate).order_by("turn__round", "created_at")
    return [f"- ROUND {round_} {position.upper()}: \u201c{claim}\u201d \u2192 {verdict}"
            for round_, position, claim, verdict in rows.values_list(
                "turn__round", "turn__position", "claim", "verdict")]


def run_judge(step: DebateStep, debate: Debate) -> Outcome:
    speeches, checks = _speeches(debate), _fact_check_lines(debate)
    judges = judges_for(debate)
    results: list[tuple[str, object, JudgeResult]] = []
    for role, judge in judges:
        if role == "tiebreaker":
            continue
        pair = aio.run(judge_both_orders(model_endpoint(judge), debate.topic.motion, speeches,
                                         checks))
        results += [(role, judge, r) for r in pair]
        if all(r.winner for r in pair):
            break
    tiebreaker = dict(judges).get("tiebreaker")
    valid = [r for _, _, r in results if r.winner]
    if len(valid) >= 2 and valid[-1].winner != valid[-2].winner and tiebreaker is not None:
        pair = aio.run(judge_both_orders(model_endpoint(tiebreaker), debate.topic.motion,
                                         speeches, checks))
        results += [("tiebreaker", tiebreaker, r) for r in pair]

    def write() -> None:
        debate_record_verdicts(debate_id=debate.pk, results=results)

    return Outcome(ok=True, write=write, tokens=sum(r.tokens for _, _, r in results),
                   cost_usd=sum(r.cost_usd for _, _, r in results))


RUNNERS: dict[str, Callable[[DebateStep, Debate], Outcome]] = {
    StepKind.MODERATOR: run_moderator,
    StepKind.TURN: run_turn,
    StepKind.FACT_CHECK: run_fact_check,
    StepKind.JUDGE: run_judge,
}

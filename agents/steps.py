"""The evaluation of a conversation, one platform step per stage (seed 002's pipeline):

* ``latency`` — turn gaps measured from the two recordings with VAD (agent speech onset −
  caller speech offset): average, p50, p95 and the first response, the same for every
  provider, whatever the provider reports;
* ``transcript`` — both recordings transcribed by the configured transcriber, speech
  stretch by stretch, interleaved in time;
* ``judge`` (after the vote) — the LLM judge's task success, coherence, instruction
  following and hallucinations against the scenario's success criteria, plus joint goal
  accuracy, containment and turns to completion (deterministic, :mod:`agents.slots`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from agents import judgement, services, slots
from agents.models import AgentConversation, EvaluationStage, StageKind, recordings_dir
from agents.speech import vad
from agents.speech.audio import SAMPLE_BYTES, SAMPLE_RATE, read_wav
from agents.transcribers import TranscriberFailed, transcriber
from arena import aio
from arena.llm import LLMError, ModelEndpoint, complete_json
from arena.selectors import model_endpoint_by_slug, model_list_available
from arena.steps import StepResult, StepWork, step_run

logger = logging.getLogger(__name__)

RECORDING_MISSING = "The recording of this conversation is missing."
JUDGE_FAILED = "The judge could not rate this conversation: {reason}"
TRANSCRIBE_MERGE_MS = 600  # pauses shorter than this stay in one transcribed stretch

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "task_success": {"type": "boolean"},
        "coherence": {"type": "number"},
        "instruction_following": {"type": "number"},
        "hallucination_count": {"type": "integer"},
        "reason": {"type": "string"},
    },
    "required": ["task_success", "coherence", "instruction_following",
                 "hallucination_count", "reason"],
}
JUDGE_SYSTEM = (
    "You evaluate a phone call between a caller and an AI voice agent. Judge only from the "
    "transcript and the scenario. task_success: the success criteria were met. coherence and "
    "instruction_following: 0 to 1. hallucination_count: statements of fact the agent made "
    "that the scenario and tool results do not support. reason: what in the transcript "
    "decided it, in your own words."
)


def _tracks(conversation: AgentConversation) -> tuple[bytes, bytes]:
    base = recordings_dir()
    try:
        return (read_wav(base / conversation.user_audio_path),
                read_wav(base / conversation.agent_audio_path))
    except (OSError, ValueError, EOFError):
        raise FileNotFoundError(RECORDING_MISSING) from None


class StageFailed(Exception):
    """The message is safe to show."""


@dataclass
class StageJob:
    stage: EvaluationStage
    measure: Callable[[AgentConversation], tuple[dict, dict]]  # -> (results, usage)


def stage_load(stage_id) -> StageJob:
    stage = EvaluationStage.objects.select_related(
        "conversation__scenario", "conversation__battle").get(pk=stage_id)
    if stage.kind == StageKind.JUDGE:
        slug = judge_model(stage.conversation.battle)
        endpoint = model_endpoint_by_slug(slug) if slug else None
        return StageJob(stage, lambda conversation: _judge(conversation, endpoint))
    return StageJob(stage, {StageKind.LATENCY: _measure_latency,
                            StageKind.TRANSCRIPT: _transcribe}[stage.kind])


def stage_work(job: StageJob) -> StepResult:
    """Measure; a missing recording or a failed transcriber or judge fails the stage with the
    reason, and the rest of the evaluation goes on."""
    try:
        results, usage = job.measure(job.stage.conversation)
    except (FileNotFoundError, StageFailed) as exc:
        return StepResult(error=str(exc))
    conversation_id = job.stage.conversation_id

    def write() -> None:
        AgentConversation.objects.filter(pk=conversation_id).update(**results)

    return StepResult(fields=usage, write=write)


def stage_advance(stage: EvaluationStage) -> None:
    services.evaluation_advance(battle_id=AgentConversation.objects.values_list(
        "battle_id", flat=True).get(pk=stage.conversation_id))


STAGE = StepWork(EvaluationStage, load=stage_load, work=stage_work, advance=stage_advance)


def evaluation_stage_run(*, stage_id: str, generation: int) -> None:
    step_run(STAGE, stage_id, generation)


def _measure_latency(conversation: AgentConversation) -> tuple[dict, dict]:
    caller, agent = _tracks(conversation)
    gaps = vad.turn_gaps(vad.speech_segments(caller), vad.speech_segments(agent))
    summary = vad.latency_summary(gaps)
    return {
        "turn_gaps_json": [{"caller_stopped": round(g.caller_stopped, 3),
                            "agent_started": round(g.agent_started, 3), "gap_ms": g.ms}
                           for g in gaps],
        "avg_response_latency_ms": summary["avg_ms"], "p50_latency_ms": summary["p50_ms"],
        "p95_latency_ms": summary["p95_ms"], "ttfb_avg_ms": summary["first_ms"],
    }, {}


def _transcribe(conversation: AgentConversation) -> tuple[dict, dict]:
    caller, agent = _tracks(conversation)
    stretches = sorted(
        [(start, end, "user", caller) for start, end in
         vad.speech_segments(caller, min_silence_ms=TRANSCRIBE_MERGE_MS)]
        + [(start, end, "agent", agent) for start, end in
           vad.speech_segments(agent, min_silence_ms=TRANSCRIBE_MERGE_MS)])
    engine = transcriber()
    lines = []
    try:
        for start, end, role, pcm in stretches:
            piece = pcm[int(start * SAMPLE_RATE) * SAMPLE_BYTES:int(end * SAMPLE_RATE)
                        * SAMPLE_BYTES]
            text = engine.transcribe(piece)
            if text:
                lines.append(slots.Line(role, text))
    except TranscriberFailed as exc:
        raise StageFailed(str(exc)) from None
    return {"transcript_full": slots.format_transcript(lines)}, {}


def _judge_lines(conversation: AgentConversation) -> list[slots.Line]:
    """What was said, for the judge and the slots: the call's own turns (what the agent said,
    as it said it, and what the live recogniser heard) when it has them; otherwise the
    recordings' transcript. A speech recogniser mishearing a synthetic voice ("Tuesday" from
    eSpeak as "two Zet") must not count against the agent."""
    lines = [slots.Line(t.get("role", ""), t.get("text", "")) for t in conversation.turns_json
             if t.get("role") in ("user", "agent") and t.get("text")]
    return lines or slots.parse_transcript(conversation.transcript_full)


def _judge(conversation: AgentConversation,
           endpoint: ModelEndpoint | None) -> tuple[dict, dict]:
    """The arena's own checks (slots, hand-offs, references nobody gave), then the judge's
    reply bounded by them (:mod:`agents.judgement`); ``endpoint``: the judge's model, None
    when no model independent of both agents is available."""
    scenario = conversation.scenario
    lines = _judge_lines(conversation)
    spoke = any(line.role == "user" for line in lines)
    report = slots.slot_report(scenario.required_slots, lines, conversation.tool_calls_json)
    fields = {"joint_goal_accuracy": report["accuracy"], "slots_json": report["slots"],
              "turns_to_completion": report["turns_to_completion"],
              "containment": slots.contained(lines) if spoke else None}
    invented = judgement.unsupported_references(
        lines, judgement.scenario_sources(scenario, conversation.tool_calls_json))
    judge = endpoint if spoke else None
    judged, usage = _llm_verdict(conversation, lines, judge) if judge else (None, {})
    verdict = judgement.call_verdict(lines=lines, slots=report["slots"],
                                     accuracy=report["accuracy"], invented=invented,
                                     judged=judged, judge_missing=spoke and judge is None)
    return {**fields, **verdict}, usage


def _llm_verdict(conversation: AgentConversation, lines: list[slots.Line],
                 endpoint: ModelEndpoint) -> tuple[dict, dict]:
    scenario = conversation.scenario
    tools = "\n".join(f"{c.get('name')}: {c.get('result')}"
                      for c in conversation.tool_calls_json) or "(none)"
    prompt = (f"Scenario: {scenario.name}\nThe caller's task: {scenario.description_for_user}\n"
              f"The agent's instructions: {scenario.system_prompt}\n"
              f"Success criteria: {scenario.success_criteria}\nTool results: {tools}\n\n"
              f"Transcript:\n{slots.format_transcript(lines) or '(nothing was said)'}")
    endpoint = dataclasses.replace(endpoint, system_prompt=JUDGE_SYSTEM)
    try:
        result = aio.run(complete_json(endpoint, [{"role": "user", "content": prompt}],
                                       JUDGE_SCHEMA))
    except LLMError as exc:
        raise StageFailed(JUDGE_FAILED.format(reason=exc.user_message)) from None
    data = result.data
    return {
        "task_success": bool(data["task_success"]),
        "coherence": _unit(data["coherence"]),
        "instruction_following": _unit(data["instruction_following"]),
        "hallucination_count": max(0, min(int(data["hallucination_count"]), 100)),
        "reason": str(data["reason"]),
    }, EvaluationStage().usage_fields(result.completion)


def _unit(value: object) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    if number > 1 and number <= 10:  # a judge that answered on a 10-point scale
        number /= 10
    return round(max(0.0, min(number, 1.0)), 3)


def judge_model(battle) -> str | None:  # noqa: ANN001 - an AgentBattle
    """The configured judge (``ARENA_VOICE_JUDGE_MODEL``), else the first available model,
    never the language model of either agent (None when every available one is)."""
    agents = judgement.agent_models(battle.config_a, battle.config_b)
    chosen = judgement.independent_judge(model_list_available(),
                                         settings.ARENA_VOICE_JUDGE_MODEL, agents)
    return chosen.slug if chosen is not None else None

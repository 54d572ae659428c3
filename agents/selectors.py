"""Reads of voice-agent battles: what a battle shows before and after the vote, the
progressive metrics, the figures of the home page. Nothing names an agent before the vote."""

from __future__ import annotations

import io

from agents.models import (
    AgentBattle,
    AgentConfiguration,
    AgentConversation,
    AgentVote,
    ConversationStatus,
    EvaluationStage,
    Provider,
    Scenario,
    StageKind,
    recordings_dir,
)
from agents.speech.audio import mix, read_wav, write_wav
from agents.speech.turn_clock import TIMING_KEYS, latency_stats
from arena.errors import RuleError
from arena.modes import Figure
from arena.queries import one_or_none
from arena.steps import FINISHED, StepStatus

VOTE_FIRST = "Vote first: the agents and their metrics are revealed after your vote."


def agent_battle_owned(*, battle_id, session_key: str | None,
                       lock: bool = False) -> AgentBattle | None:
    """The battle if ``session_key`` started it (locked for a write with ``lock``), else
    None: for anyone else it does not exist."""
    if not session_key or battle_id is None:
        return None
    battles = AgentBattle.objects.select_related("scenario", "config_a", "config_b")
    if lock:
        battles = battles.select_for_update(of=("self",))
    return one_or_none(battles.filter(pk=battle_id, session_key=session_key))


RECORDING_SIDES = ("call", "caller", "agent")


def conversation_recording(*, battle_id, session_key: str | None, label: str,
                           side: str) -> bytes | None:
    """One finished call's recording as WAV, for the battle's owner only (before the vote
    too: the caller may listen again before deciding): ``caller``, ``agent`` or ``call``
    (both voices mixed). None for anyone else, an unknown side, or a missing file."""
    battle = agent_battle_owned(battle_id=battle_id, session_key=session_key)
    if battle is None or side not in RECORDING_SIDES or label not in ("a", "b"):
        return None
    conversation = battle.conversations.filter(agent_label=label,
                                               status=ConversationStatus.DONE).first()
    if conversation is None:
        return None
    paths = {"caller": [conversation.user_audio_path], "agent": [conversation.agent_audio_path],
             "call": [conversation.user_audio_path, conversation.agent_audio_path]}[side]
    try:
        tracks = [read_wav(recordings_dir() / path) for path in paths]
    except (OSError, ValueError, EOFError):
        return None
    pcm = mix(*tracks) if len(tracks) == 2 else tracks[0]
    out = io.BytesIO()
    write_wav(out, pcm)
    return out.getvalue()


def scenario_payload(battle: AgentBattle) -> dict:
    scenario = battle.scenario
    return {"id": str(scenario.pk), "name": scenario.name, "category": scenario.category,
            "difficulty": scenario.difficulty,
            "description_for_user": scenario.description_for_user,
            "adversarial_turns": scenario.adversarial_turns,
            "max_turns": scenario.max_turns,
            "max_duration_seconds": scenario.max_duration_seconds}


def agent_reveal(config: AgentConfiguration) -> dict:
    return {"name": config.name, "provider": config.provider,
            "provider_name": config.get_provider_display(),
            "architecture": config.architecture_type,
            "architecture_name": config.get_architecture_type_display(),
            "components": config.components_json, "offline_demo": config.is_offline_demo}


def both_offline(battle: AgentBattle) -> bool:
    """Both agents are the offline demo (saying so names neither)."""
    return battle.config_a.provider == battle.config_b.provider == Provider.LOCAL


def turn_payload(turn: dict, *, revealed: bool) -> dict:
    """One saved turn; its timing (where its audio lies in the recording, the agent's answer
    latency) only after the vote: a side's timings tell the agents apart."""
    timing = {key: turn.get(key) if revealed else None for key in TIMING_KEYS}
    return {"role": turn.get("role"), "text": turn.get("text"), **timing,
            "offset_ms": timing["start_ms"]}


def recording_url(conversation: AgentConversation, side: str = "call") -> str:
    return f"/voice/{conversation.battle_id}/recordings/{conversation.agent_label}-{side}.wav"


def conversation_summary(conversation: AgentConversation | None, *,
                         revealed: bool = False) -> dict | None:
    if conversation is None:
        return None
    done = conversation.status == ConversationStatus.DONE
    return {"status": conversation.status, "turns": conversation.total_turns,
            "duration_seconds": conversation.duration_seconds,
            "end_reason": conversation.end_reason, "error": conversation.error,
            "recording_url": recording_url(conversation) if done else None,
            "transcript": [turn_payload(t, revealed=revealed) for t in conversation.turns_json]}


def battle_payload(battle: AgentBattle) -> dict:
    held = {c.agent_label: c for c in battle.conversations.all()}
    vote = AgentVote.objects.filter(battle=battle).first()
    payload = {
        "battle_id": str(battle.pk), "battle_type": "agent", "status": battle.status,
        "error": battle.error, "scenario": scenario_payload(battle),
        "agents": [{"label": label, "stream_url": f"/battles/{battle.pk}/agent-stream"
                                                  f"?agent={label}"} for label in ("a", "b")],
        "offline_demo": both_offline(battle),
        "conversations": {label: conversation_summary(held.get(label), revealed=vote is not None)
                          for label in "ab"},
        "vote": None, "reveal": None,
    }
    if vote is not None:
        payload["vote"] = {"overall": vote.overall, "sub_votes": vote.sub_votes_json}
        payload["reveal"] = {"a": agent_reveal(battle.config_a),
                             "b": agent_reveal(battle.config_b)}
    return payload


def _metrics(conversation: AgentConversation,
             stages: dict[str, EvaluationStage]) -> tuple[dict, dict[str, str]]:

    def done(kind: str) -> bool:
        return kind in stages and stages[kind].status == StepStatus.DONE

    c = conversation
    errors = {s.kind: s.error for s in stages.values() if s.status == StepStatus.FAILED}
    statuses = {kind: (stages[kind].status if kind in stages else "waiting")
                for kind in StageKind.values}
    answers = [t["latency_ms"] for t in c.turns_json if t.get("latency_ms") is not None]
    return {
        "duration_seconds": c.duration_seconds, "turns": c.total_turns,
        "stages": statuses, "errors": errors,
        "turn_timings": [turn_payload(t, revealed=True) for t in c.turns_json],
        "live_latency": latency_stats(answers),
        "latency": {"avg_ms": c.avg_response_latency_ms, "p50_ms": c.p50_latency_ms,
                    "p95_ms": c.p95_latency_ms, "first_response_ms": c.ttfb_avg_ms,
                    "turn_gaps_ms": [g["gap_ms"] for g in c.turn_gaps_json],
                    "provider_reported": c.provider_metrics_json or None}
        if done(StageKind.LATENCY) else None,
        "transcript": c.transcript_full if done(StageKind.TRANSCRIPT) else None,
        "evaluation": {"task_success": c.task_success, "coherence": c.coherence,
                       "instruction_following": c.instruction_following,
                       "hallucination_count": c.hallucination_count,
                       "reason": c.judge_reason, "joint_goal_accuracy": c.joint_goal_accuracy,
                       "slots": c.slots_json, "containment": c.containment,
                       "turns_to_completion": c.turns_to_completion}
        if done(StageKind.JUDGE) else None,
    }, statuses


def metrics_payload(battle: AgentBattle) -> dict:
    """Seed 002's progressive reveal: ``computing`` → ``partial`` (latency first) →
    ``complete`` (every stage finished, done or failed)."""
    if not AgentVote.objects.filter(battle=battle).exists():
        raise RuleError(VOTE_FIRST, status=409)
    # The stages first: a stage is saved done in one transaction with its results, so the
    # conversations read after it hold them (read the other way round, a judge finishing in
    # between would show as done with empty results).
    stages: dict = {}
    for stage in EvaluationStage.objects.filter(conversation__battle=battle):
        stages.setdefault(stage.conversation_id, {})[stage.kind] = stage
    conversations = battle.conversations.filter(status=ConversationStatus.DONE)
    found = {c.agent_label: _metrics(c, stages.get(c.pk, {})) for c in conversations}
    statuses = [s for _m, stages in found.values() for s in stages.values()]
    if statuses and all(s in FINISHED for s in statuses):
        status = "complete"
    elif found and all(stages[StageKind.LATENCY] in FINISHED for _m, stages in found.values()):
        status = "partial"
    else:
        status = "computing"
    return {"battle_id": str(battle.pk), "status": status,
            "conversations": {label: metrics for label, (metrics, _s) in found.items()},
            "reveal": {"a": agent_reveal(battle.config_a), "b": agent_reveal(battle.config_b)}}


def home_figures() -> list[Figure]:
    return [Figure("voice battles voted", AgentVote.objects.count()),
            Figure("scenarios", Scenario.objects.filter(active=True).count())]

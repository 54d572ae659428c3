"""Seed 002's voice-battle API at its own paths (outside /api/, as the seed writes them):
``POST /battles/generate``, ``GET /battles/{id}``, ``POST /battles/{id}/vote`` and
``GET /battles/{id}/agent-metrics``; the audio goes through ``WS
/battles/{id}/agent-stream?agent=a|b`` (:mod:`agents.consumers`). Thin: parse, call a
service or selector, shape. OpenAPI at ``/voice-api/openapi.json``."""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest
from ninja import Field, NinjaAPI, Router, Schema

from agents import selectors, services
from arena.api import OfflineSwagger, answer_errors_as_detail
from arena.api_errors import errors
from arena.contests.flags import voter_of
from arena.errors import RuleError
from arena.inputs import parse_uuid
from arena.visitors import (
    VOICE_BATTLE,
    VOICE_WRITE,
    found_or_404,
    visitor_read,
    visitor_write,
)

router = Router(tags=["voice battles"])
ONLY_AGENT = "Only agent battles are generated here (battle_type \"agent\"); text battles " \
             "start at POST /api/battles."


class VoiceGenerateIn(Schema):
    battle_type: str = Field("agent", description='Seed 002: "agent".')


class VoiceScenarioOut(Schema):
    id: str
    name: str
    category: str
    difficulty: str
    description_for_user: str
    adversarial_turns: list[str]
    max_turns: int
    max_duration_seconds: int


class VoiceAgentSlotOut(Schema):
    label: str
    stream_url: str


class VoiceConversationOut(Schema):
    status: str
    turns: int
    duration_seconds: float | None
    end_reason: str
    error: str
    transcript: list[dict[str, str | None]]


class VoiceVoteOut(Schema):
    overall: str
    sub_votes: dict[str, str]


class VoiceRevealOut(Schema):
    name: str
    provider: str
    provider_name: str
    architecture: str
    architecture_name: str
    components: dict[str, str]
    offline_demo: bool


class VoiceBattleOut(Schema):
    battle_id: str
    battle_type: str
    status: str
    error: str
    scenario: VoiceScenarioOut
    agents: list[VoiceAgentSlotOut]
    offline_demo: bool = Field(description="Both agents are the offline demo agent.")
    conversations: dict[str, VoiceConversationOut | None]
    vote: VoiceVoteOut | None
    reveal: dict[str, VoiceRevealOut] | None


class VoiceVoteIn(Schema):
    overall: Literal["a", "b", "tie"]
    sub_votes: dict[str, Literal["a", "b", "tie"]] = Field(
        default_factory=dict, description="naturalness, speed, understanding, helpfulness.")
    publish_text: bool = Field(False, description="The voter lets both calls' transcripts be "
                               "published in the open data releases (redacted).")


class VoiceLatencyOut(Schema):
    avg_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    first_response_ms: float | None
    turn_gaps_ms: list[float]
    provider_reported: dict | None


class VoiceEvaluationOut(Schema):
    task_success: bool | None
    coherence: float | None
    instruction_following: float | None
    hallucination_count: int | None
    reason: str
    joint_goal_accuracy: float | None
    slots: dict[str, bool]
    containment: bool | None
    turns_to_completion: int | None


class VoiceConversationMetricsOut(Schema):
    duration_seconds: float | None
    turns: int
    stages: dict[str, str]
    errors: dict[str, str]
    latency: VoiceLatencyOut | None
    transcript: str | None
    evaluation: VoiceEvaluationOut | None


class VoiceMetricsOut(Schema):
    battle_id: str
    status: Literal["computing", "partial", "complete"]
    conversations: dict[str, VoiceConversationMetricsOut]
    reveal: dict[str, VoiceRevealOut]


def _battle(request: HttpRequest, battle_id: str):
    return visitor_read(request, lambda key: found_or_404(
        selectors.agent_battle_owned(battle_id=parse_uuid(battle_id), session_key=key),
        services.BATTLE_NOT_FOUND))


@router.post("/battles/generate", response={200: VoiceBattleOut, **errors(400, 413, 422, 429, 503)})
def generate(request: HttpRequest, payload: VoiceGenerateIn):
    """Pick a scenario and two agents that can take calls (two providers when there are)."""
    if payload.battle_type != "agent":
        raise RuleError(ONLY_AGENT, status=422)
    battle = visitor_write(request, lambda key: services.agent_battle_create(session_key=key),
                           VOICE_BATTLE)
    return selectors.battle_payload(battle)


@router.get("/battles/{battle_id}", response={200: VoiceBattleOut, **errors(404)})
def battle_detail(request: HttpRequest, battle_id: str):
    """The battle as its owner sees it; the agents are named only after the vote."""
    return selectors.battle_payload(_battle(request, battle_id))


@router.post("/battles/{battle_id}/vote",
             response={200: VoiceBattleOut, **errors(400, 404, 409, 413, 422, 429, 503)})
def vote(request: HttpRequest, battle_id: str, payload: VoiceVoteIn):
    """One vote per battle, after both conversations; reveals the agents."""
    visitor_write(request, lambda key: services.agent_battle_vote(
        battle_id=parse_uuid(battle_id), session_key=key, overall=payload.overall,
        sub_votes=payload.sub_votes, voter=voter_of(request),
        publish_text=payload.publish_text), VOICE_WRITE)
    return selectors.battle_payload(_battle(request, battle_id))


@router.get("/battles/{battle_id}/agent-metrics",
            response={200: VoiceMetricsOut, **errors(404, 409)})
def agent_metrics(request: HttpRequest, battle_id: str):
    """``computing``, then ``partial`` (latency first), then ``complete``."""
    return selectors.metrics_payload(_battle(request, battle_id))


api = answer_errors_as_detail(NinjaAPI(
    title="Arena voice-battle API", version="1.0", urls_namespace="voice-api",
    openapi_url="/voice-api/openapi.json", docs_url="/voice-api/docs", docs=OfflineSwagger()))
api.add_router("", router)

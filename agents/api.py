"""Seed 002's voice-battle API at its own paths (outside /api/, as the seed writes them):
``POST /battles/generate``, ``GET /battles/{id}``, ``POST /battles/{id}/vote`` and
``GET /battles/{id}/agent-metrics``, and ``GET /agents/win-rates``; the audio goes through ``WS
/battles/{id}/agent-stream?agent=a|b`` (:mod:`agents.consumers`). Thin: parse, call a
service or selector, shape. OpenAPI at ``/voice-api/openapi.json``."""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest
from ninja import Field, NinjaAPI, Router, Schema

from agents import selectors, services, win_rates
from arena.api import OfflineSwagger, answer_errors_as_detail
from arena.api_errors import errors
from arena.contests.flags import voter_of
from arena.contests.human_check import human_check_require
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


class VoiceTurnOut(Schema):
    role: str | None
    text: str | None
    start_ms: int | None = Field(description="Where the turn's audio begins in its recording, "
                                             "ms from the recording's start (seed 002). Null "
                                             "before the vote, or when not measured.")
    end_ms: int | None = Field(description="Where it ends; null before the vote.")
    latency_ms: float | None = Field(
        description="An agent turn's answer time: the caller's end of turn to the agent's "
                    "first audio, measured by the proxy. Null before the vote, for the "
                    "greeting and for caller turns.")
    offset_ms: int | None = Field(description="The same as start_ms: the turn's offset in "
                                              "the recording.")


class VoiceConversationOut(Schema):
    status: str
    turns: int
    duration_seconds: float | None
    end_reason: str
    error: str
    recording_url: str | None = Field(
        description="The finished call, both voices (the battle's owner only; the caller may "
                    "replay it before voting). Also -caller.wav and -agent.wav.")
    transcript: list[VoiceTurnOut]


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


class VoiceLiveLatencyOut(Schema):
    avg_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    answered: int = Field(description="Agent turns that answered the caller.")


class VoiceConversationMetricsOut(Schema):
    duration_seconds: float | None
    turns: int
    stages: dict[str, str]
    errors: dict[str, str]
    turn_timings: list[VoiceTurnOut]
    live_latency: VoiceLiveLatencyOut = Field(
        description="The saved turns' answer latencies, measured live by the proxy.")
    latency: VoiceLatencyOut | None
    transcript: str | None
    evaluation: VoiceEvaluationOut | None


class VoiceMetricsOut(Schema):
    battle_id: str
    status: Literal["computing", "partial", "complete"]
    conversations: dict[str, VoiceConversationMetricsOut]
    reveal: dict[str, VoiceRevealOut]


class VoiceWinRateOut(Schema):
    dimension: str
    wins: int
    ties: int
    losses: int
    n: int = Field(description="Votes on this dimension in the agent's battles.")
    win_rate: float | None = Field(description="wins / n; null with no vote.")
    ci_lower: float | None = Field(description="95% Wilson score interval; null with no vote.")
    ci_upper: float | None


class VoiceAgentWinRatesOut(Schema):
    agent_id: str
    name: str
    provider: str
    llm: str
    votes: int
    win_rates: dict[str, VoiceWinRateOut]


class VoiceWinRatesOut(Schema):
    dimensions: list[str]
    confidence: float
    agents: list[VoiceAgentWinRatesOut]


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
             response={200: VoiceBattleOut, **errors(400, 404, 409, 413, 422, 428, 429, 503)})
def vote(request: HttpRequest, battle_id: str, payload: VoiceVoteIn):
    """One vote per battle, after both conversations; reveals the agents."""
    def act(key):
        human_check_require(request, session_key=key)
        return services.agent_battle_vote(
            battle_id=parse_uuid(battle_id), session_key=key, overall=payload.overall,
            sub_votes=payload.sub_votes, voter=voter_of(request),
            publish_text=payload.publish_text)

    visitor_write(request, act, VOICE_WRITE)
    return selectors.battle_payload(_battle(request, battle_id))


@router.get("/battles/{battle_id}/agent-metrics", url_name="agent-metrics",
            response={200: VoiceMetricsOut, **errors(404, 409)})
def agent_metrics(request: HttpRequest, battle_id: str):
    """``computing``, then ``partial`` (latency first), then ``complete``."""
    return selectors.metrics_payload(_battle(request, battle_id))


@router.get("/agents/win-rates", response={200: VoiceWinRatesOut})
def agent_win_rates(request: HttpRequest):
    """Every voice agent's win rate overall and on each sub-dimension (naturalness, speed,
    understanding, helpfulness), from the votes that count, with n and a Wilson interval."""
    return win_rates.win_rates_payload(win_rates.agent_win_rates())


api = answer_errors_as_detail(NinjaAPI(
    title="Arena voice-battle API", version="1.0", urls_namespace="voice-api",
    openapi_url="/voice-api/openapi.json", docs_url="/voice-api/docs", docs=OfflineSwagger()))
api.add_router("", router)

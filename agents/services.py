"""Writes of voice-agent battles: generate a battle, open and close its two conversations,
take the vote, and move the evaluation on (keyword-only; the rules live here)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import numpy as np
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.adapters import agent_problem
from agents.integrity import COUNTED_VOTES, NAMES_AN_AGENT, battle_leak
from agents.models import (
    SUB_DIMENSIONS,
    AgentBattle,
    AgentConfiguration,
    AgentConversation,
    AgentVote,
    BattleStatus,
    ConversationStatus,
    EvaluationStage,
    Overall,
    Scenario,
    StageKind,
)
from agents.selectors import agent_battle_owned
from agents.signals import agent_vote_recorded
from arena.contests.pairing import pair_pick
from arena.contests.voting import vote_once
from arena.errors import RuleError
from arena.steps import step_enqueue
from arena.visitors import found_or_404
from leaderboard.ratings.pairing import partner_pairs

BATTLE_NOT_FOUND = "Voice battle not found."
NEED_TWO_AGENTS = "Voice battles need two agents that can take calls now. {reasons}"
NO_SCENARIO = "No voice scenario is active: load them with manage.py load_voice_library."
BAD_LABEL = "Choose agent a or b."
SLOT_TAKEN = "You already talked to Agent {label}. {next_step}"
A_FIRST = "Talk to Agent A first; Agent B comes after."
BATTLE_OVER = "This battle is over. Start a new one."
BATTLE_FAILED = "An agent of this battle failed ({error}). Start a new battle."
TALK_TO_BOTH = "Talk to both agents before voting."
ALREADY_VOTED = "You already voted on this battle."
BAD_OVERALL = "Vote a, b or tie overall."
BAD_SUB_VOTE = ("Sub-votes are naturalness, speed, understanding and helpfulness, each a, b "
                "or tie.")


def available_agents() -> tuple[list[AgentConfiguration], dict[str, str]]:
    """The agents that can take calls now, and why each other one cannot."""
    ready, reasons = [], {}
    for config in AgentConfiguration.objects.filter(active=True):
        problem = agent_problem(config)
        if problem:
            reasons[config.name] = problem
        else:
            ready.append(config)
    return ready, reasons


def agent_battle_pair_pick(agents: list[AgentConfiguration], *,
              rng: random.Random | None = None) -> tuple[AgentConfiguration, AgentConfiguration]:
    """Two different agents, from two different providers whenever there are two; the order
    (who is A) is random."""
    return pair_pick(agents, rule=_across_providers, rng=rng)


def _across_providers(agents: list[AgentConfiguration]) -> np.ndarray:
    """An agent drawn, then its partner among the other providers' agents."""
    return partner_pairs(np.array([[a.provider != b.provider for b in agents]
                                   for a in agents]))


def agent_battle_create(*, session_key: str, rng: random.Random | None = None) -> AgentBattle:
    agents, reasons = available_agents()
    if len(agents) < 2:
        detail = " ".join(f"{name}: {why}" for name, why in sorted(reasons.items())[:4])
        raise RuleError(NEED_TWO_AGENTS.format(reasons=detail).strip(), status=503)
    scenarios = list(Scenario.objects.filter(active=True))
    if not scenarios:
        raise RuleError(NO_SCENARIO, status=503)
    rng = rng or random.SystemRandom()
    config_a, config_b = agent_battle_pair_pick(agents, rng=rng)
    return AgentBattle.objects.create(session_key=session_key, scenario=rng.choice(scenarios),
                                      config_a=config_a, config_b=config_b)


def conversation_open(*, battle_id, label: str, session_key: str | None) -> AgentConversation:
    """Take a free slot of the battle for one live call (refused with the reason)."""
    if label not in ("a", "b"):
        raise RuleError(BAD_LABEL)
    try:
        with transaction.atomic():
            battle = found_or_404(agent_battle_owned(battle_id=battle_id, session_key=session_key,
                                                      lock=True), BATTLE_NOT_FOUND)
            _check_open(battle, label)
            conversation = AgentConversation.objects.create(
                battle=battle, agent_label=label, agent_config=battle.config(label),
                scenario=battle.scenario)
            if battle.status == BattleStatus.BRIEFING:
                battle.status = BattleStatus.CONVERSING
                battle.save(update_fields=["status"])
    except IntegrityError:
        raise RuleError(SLOT_TAKEN.format(label=label.upper(), next_step=""), status=409) \
            from None
    conversation.battle = battle
    return conversation


def _check_open(battle: AgentBattle, label: str) -> None:
    if battle.status == BattleStatus.FAILED:
        raise RuleError(BATTLE_FAILED.format(error=battle.error.rstrip(".")), status=409)
    if battle.status == BattleStatus.VOTED:
        raise RuleError(BATTLE_OVER, status=409)
    held = {c.agent_label: c for c in battle.conversations.all()}
    if label in held:
        next_step = "Talk to Agent B." if label == "a" and "b" not in held else "Vote now."
        raise RuleError(SLOT_TAKEN.format(label=label.upper(), next_step=next_step),
                        status=409)
    if label == "b" and (held.get("a") is None or held["a"].status != ConversationStatus.DONE):
        raise RuleError(A_FIRST, status=409)


def conversation_close(*, conversation_id, error: str = "", end_reason: str,
                       turns: list[dict[str, Any]], tool_calls: list[dict[str, Any]],
                       duration_seconds: float, user_audio_path: str, agent_audio_path: str,
                       provider_metrics: Mapping[str, Any] | None = None) -> AgentConversation:
    """Save a call that ended (whatever ended it) and start measuring it."""
    with transaction.atomic():
        conversation = (AgentConversation.objects.select_for_update()
                        .select_related("battle").get(pk=conversation_id))
        if conversation.status != ConversationStatus.LIVE:
            return conversation
        conversation.status = ConversationStatus.FAILED if error else ConversationStatus.DONE
        conversation.error = error[:300]
        conversation.end_reason = end_reason[:200]
        conversation.turns_json = turns
        conversation.tool_calls_json = tool_calls
        conversation.total_turns = sum(1 for t in turns if t.get("role") == "user")
        conversation.duration_seconds = round(duration_seconds, 2)
        conversation.user_audio_path = user_audio_path
        conversation.agent_audio_path = agent_audio_path
        conversation.provider_metrics_json = dict(provider_metrics or {})
        conversation.ended_at = timezone.now()
        conversation.save()
        battle = AgentBattle.objects.select_for_update().get(pk=conversation.battle_id)
        if error:
            battle.status, battle.error = BattleStatus.FAILED, error[:300]
        elif battle.conversations.filter(status=ConversationStatus.DONE).count() == 2:
            battle.status = BattleStatus.VOTING
        battle.save(update_fields=["status", "error"])
        evaluation_advance(battle_id=battle.pk)
    return conversation


def conversation_report_save(*, conversation_id, report: Mapping[str, Any]) -> None:
    """Add what the provider reports of a finished call to what the call saved."""
    with transaction.atomic():
        conversation = AgentConversation.objects.select_for_update().get(pk=conversation_id)
        conversation.provider_metrics_json = {**conversation.provider_metrics_json, **report}
        conversation.save(update_fields=["provider_metrics_json"])


CUT_OFF = "The call was cut off: the server handling it stopped."
CUT_OFF_GRACE_SECONDS = 60


def conversation_stalled_sweep() -> int:
    """Close the calls whose proxy died with them (still live well past the scenario's time
    limit): each is failed with the reason, so its battle tells the person to start anew
    instead of waiting for a call that will never end. Returns how many were closed."""
    now = timezone.now()
    closed = 0
    for conversation in AgentConversation.objects.filter(
            status=ConversationStatus.LIVE).select_related("scenario"):
        limit = conversation.scenario.max_duration_seconds + CUT_OFF_GRACE_SECONDS
        if conversation.created_at + timedelta(seconds=limit) < now:
            conversation_close(conversation_id=conversation.pk, error=CUT_OFF,
                               end_reason="cut off", turns=[], tool_calls=[],
                               duration_seconds=float(limit), user_audio_path="",
                               agent_audio_path="")
            closed += 1
    return closed


def _sub_votes(raw: Mapping[str, str] | None) -> dict[str, str]:
    votes = dict(raw or {})
    if any(k not in SUB_DIMENSIONS or v not in Overall.values for k, v in votes.items()):
        raise RuleError(BAD_SUB_VOTE, status=422)
    return votes


def agent_battle_vote(*, battle_id, session_key: str | None, overall: str,
                sub_votes: Mapping[str, str] | None = None, voter: str = "",
                publish_text: bool = False) -> AgentVote:
    """``voter``: the client address as :func:`arena.contests.flags.voter_of` keys it (the
    daily cap on counted votes applies to it as well as to the session); ``publish_text``:
    the voter lets both calls' transcripts be published in the open data releases."""
    if overall not in Overall.values:
        raise RuleError(BAD_OVERALL, status=422)
    votes = _sub_votes(sub_votes)

    def lock() -> AgentBattle:
        battle = found_or_404(agent_battle_owned(battle_id=battle_id, session_key=session_key,
                                                      lock=True), BATTLE_NOT_FOUND)
        if battle.status == BattleStatus.VOTED:
            raise RuleError(ALREADY_VOTED, status=409)
        if battle.conversations.filter(status=ConversationStatus.DONE).count() != 2:
            raise RuleError(TALK_TO_BOTH, status=409)
        return battle

    def record(battle: AgentBattle) -> AgentVote:
        battle.status = BattleStatus.VOTED
        battle.save(update_fields=["status"])
        leaked = battle_leak(battle)
        eligibility = ({"counts_for_rating": False,
                        "exclusion_reason": NAMES_AN_AGENT.format(term=leaked)} if leaked
                       else COUNTED_VOTES.eligibility(session_key=session_key or "",
                                                      voter=voter))
        vote = AgentVote.objects.create(
            battle=battle, session_key=session_key, overall=overall, sub_votes_json=votes,
            voter=voter, publish_text=publish_text, **eligibility)
        evaluation_advance(battle_id=battle.pk)
        return vote

    return vote_once(lock=lock, has_vote=lambda b: AgentVote.objects.filter(battle=b).exists(),
                     record=record, already_voted=ALREADY_VOTED,
                     announce=lambda v: agent_vote_recorded.send(sender=AgentVote, vote=v))


def evaluation_advance(*, battle_id) -> None:
    """Create (and send) every evaluation stage whose inputs are ready: latency and
    transcripts once a conversation is saved; the judge once the battle is voted and the
    conversation's transcript is finished. Idempotent (one stage per conversation and kind)."""
    with transaction.atomic():
        battle = AgentBattle.objects.select_for_update().get(pk=battle_id)
        voted = battle.status == BattleStatus.VOTED
        for conversation in battle.conversations.filter(status=ConversationStatus.DONE):
            stages = {s.kind: s for s in conversation.stages.all()}
            wanted = [StageKind.LATENCY, StageKind.TRANSCRIPT]
            transcript = stages.get(StageKind.TRANSCRIPT)
            if voted and transcript is not None and transcript.is_finished:
                wanted.append(StageKind.JUDGE)
            for kind in wanted:
                if kind not in stages:
                    step_enqueue(EvaluationStage.objects.create(conversation=conversation,
                                                                kind=kind))


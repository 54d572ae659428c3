"""Votes of every mode, made as each mode's own services make them."""

from __future__ import annotations

from django.conf import settings
from django.test import Client
from django.utils import timezone

from agents.models import AgentConversation, ConversationStatus
from agents.tests.voice_support import echo_agents, make_battle
from battles.tests.factories import answered_battle
from debates.models import DebateStatus

SECRET_PROMPT = "Mail me at jo.doe@example.com or call +1 415 555 2671."


def visitor(client: Client) -> str:
    """The session key of ``client``, a visitor now."""
    session = client.session
    session["visitor"] = True
    session.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key
    return session.session_key


def text_battle(key: str, *, prompt: str = "What is the capital of France?", **fields):
    return answered_battle(session_key=key, prompt=prompt, **fields)


def finished_debate(**fields):
    from debates.tests.debate_support import debate_row

    debate = debate_row(**fields)
    return debate


def complete(debate, *, at=None) -> None:
    """Ends ``debate`` (now, or ``at``), as its verdicts do."""
    type(debate).objects.filter(pk=debate.pk).update(status=DebateStatus.COMPLETED,
                                                     completed_at=at or timezone.now())


def talked_voice_battle(key: str, *, caller: str = "Book me a haircut at ten.", agents=None):
    battle = make_battle(key, agents or echo_agents())
    for label, config in (("a", battle.config_a), ("b", battle.config_b)):
        AgentConversation.objects.create(
            battle=battle, agent_config=config, scenario=battle.scenario, agent_label=label,
            status=ConversationStatus.DONE, total_turns=1,
            turns_json=[{"role": "user", "text": caller},
                        {"role": "agent", "text": f"Agent {label}: booked."}])
    return battle

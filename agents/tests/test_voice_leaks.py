"""A voice battle's vote does not count when a call named an agent (issue 33, finding 4: the
identity filter runs in every mode with a blind vote; voice battles had none)."""

from __future__ import annotations

import pytest

from agents import services
from agents.integrity import NAMES_AN_AGENT
from agents.models import AgentConversation, ConversationStatus
from agents.tests.voice_support import echo_agents, make_battle

pytestmark = pytest.mark.django_db


def called(lines_a: list[str], lines_b: list[str]):
    battle = make_battle("owner", echo_agents())
    for label, config, lines in (("a", battle.config_a, lines_a), ("b", battle.config_b,
                                                                    lines_b)):
        AgentConversation.objects.create(
            battle=battle, agent_config=config, scenario=battle.scenario, agent_label=label,
            status=ConversationStatus.DONE,
            turns_json=[{"role": "agent" if i % 2 else "user", "text": text}
                        for i, text in enumerate(lines)])
    return battle


def test_a_call_that_names_its_agent_is_kept_but_not_counted():
    battle = called(["Hello?", "Hi, you are talking to **Ec**ho\u200b B."],
                    ["Hello?", "Hello, how can I help?"])
    vote = services.agent_battle_vote(battle_id=battle.pk, session_key="owner", overall="a")
    assert not vote.counts_for_rating
    assert vote.exclusion_reason == NAMES_AN_AGENT.format(term="echo")


def test_calls_that_name_nobody_count():
    battle = called(["Book me a haircut.", "Sure, Tuesday at three."],
                    ["Book me a haircut.", "Done: Tuesday at three."])
    assert services.agent_battle_vote(battle_id=battle.pk, session_key="owner",
                                overall="tie").counts_for_rating

"""A source reads its rows in a fixed number of queries, however many votes it publishes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from agents.open_data import agent_release_rows
from agents.services import agent_battle_vote
from agents.tests.voice_support import echo_agents
from debates.crowd import debate_vote
from debates.models import DebateTurn
from debates.open_data import crowd_release_rows
from debates.tests.debate_support import completed_debate

from .support import complete, finished_debate, talked_voice_battle, visitor

pytestmark = pytest.mark.django_db

VOTES = 4


def test_the_debate_rows_of_several_published_votes_take_a_few_queries(
        django_assert_max_num_queries):
    template = finished_debate()
    for i in range(VOTES):
        debate = template if i == 0 else completed_debate(template, status=template.status)
        DebateTurn.objects.create(debate=debate, round=1, position="con",
                                  speaker=debate.model_b, speech=f"A reply {i}.")
        debate_vote(debate_id=debate.pk, session_key=f"viewer-{i}", choice="pro",
                    publish_text=True)
        complete(debate)
    until = timezone.now() + timedelta(seconds=1)
    with django_assert_max_num_queries(3):
        rows = list(crowd_release_rows(until))
    assert len(rows) == VOTES and all(row["conversation_a"] for row in rows)


def test_the_voice_rows_of_several_published_votes_take_a_few_queries(
        django_assert_max_num_queries):
    agents = echo_agents()
    for _ in range(VOTES):
        key = visitor(Client())
        battle = talked_voice_battle(key, agents=agents)
        agent_battle_vote(battle_id=battle.pk, session_key=key, overall="a", publish_text=True)
    until = timezone.now() + timedelta(seconds=1)
    with django_assert_max_num_queries(3):
        rows = list(agent_release_rows(until))
    assert len(rows) == VOTES and all(row["turns"] == 1 and row["conversation_b"]
                                      for row in rows)

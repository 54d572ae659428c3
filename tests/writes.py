"""The writes of every JSON API, one per mode and kind, each with the check that it happened:
what the cross-origin and the outage tests send (the ``visitor`` fixture is in conftest)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.test import Client

from agents.models import AgentBattle
from agents.tests.voice_support import echo_agents
from battles.models import Thread, Vote
from battles.tests.factories import answered_battle
from debates.models import CrowdVote
from debates.tests.debate_support import debate_row
from panels.models import Panel

EVIL = "http://evil.example"
OWN = "http://testserver"
TOKEN = "a" * 32  # a CSRF secret, sent as the cookie and as the header


@dataclass
class Write:
    url: str
    body: dict
    happened: Callable[[], bool]


def battle_vote(key: str) -> Write:
    battle = answered_battle(session_key=key, thread__session_key=key)
    return Write(f"/api/battles/{battle.pk}/vote", {"vote": "tie"},
                 lambda: Vote.objects.filter(battle=battle).exists())


def session_create(key: str) -> Write:
    return Write("/api/sessions", {"title": "mine"}, Thread.objects.exists)


def debate_vote(key: str) -> Write:
    debate = debate_row()
    return Write("/api/debate/vote", {"debate_id": str(debate.pk), "choice": "pro"},
                 CrowdVote.objects.exists)


def debate_pause(key: str) -> Write:
    debate = debate_row(session_key=key)
    return Write(f"/api/debates/{debate.pk}/pause", {},
                 lambda: type(debate).objects.get(pk=debate.pk).status == "paused")


def panel_run(key: str) -> Write:
    return Write("/api/panel/run", {"question": "Why is the sky blue?"}, Panel.objects.exists)


def voice_generate(key: str) -> Write:
    echo_agents()
    return Write("/battles/generate", {"battle_type": "agent"}, AgentBattle.objects.exists)


WRITES = [battle_vote, session_create, debate_vote, debate_pause, panel_run, voice_generate]


def send(client: Client, write: Write, *, content_type: str = "application/json", **headers):
    body = json.dumps(write.body) if write.body else ""
    return client.post(write.url, data=body, content_type=content_type, headers=headers)

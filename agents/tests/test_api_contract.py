"""Seed 002's voice-battle API keeps the contract of /voice-api/openapi.json on a live server
(schemathesis: no 5xx, no undocumented status, content type or shape), with two echo agents
that can take calls."""

from __future__ import annotations

import pytest

from agents.tests.voice_support import echo_agents
from testkit.contract import contract_failures, no_step_unfinished
from testkit.visitors import visitor_session_key
from testkit.waiting import wait_for

pytestmark = pytest.mark.browser  # needs the live server, like the page tests


@pytest.mark.parametrize("with_session", [False, True], ids=["no session", "a session"])
def test_every_voice_operation_keeps_its_documented_contract(asgi_live_server, celery_worker,
                                                             with_session):
    echo_agents()
    failures = contract_failures(f"{asgi_live_server}/voice-api/openapi.json", at_least=4,
                                 session_key=visitor_session_key() if with_session else None)
    wait_for(no_step_unfinished, timeout=60, what="the steps the requests started")
    assert failures == [], "\n\n".join(failures)

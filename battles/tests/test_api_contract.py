"""The whole JSON API keeps the contract its OpenAPI file states: schemathesis generates
requests for every operation from /api/openapi.json and sends them to a live server (daphne,
a real worker, fake providers); no answer may be a 5xx, carry an undocumented status or
content type, or break its documented schema."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from battles.tests.factories import ThreadFactory, answered_battle, vote_on
from battles.users import user_id_of
from testkit.contract import call_validated, contract_failures, no_step_unfinished
from testkit.live import keyless
from testkit.registry import make_model
from testkit.visitors import visitor_session_key
from testkit.waiting import wait_for

pytestmark = pytest.mark.browser  # needs the live server, like the page tests


@pytest.fixture
def live_api(asgi_live_server, celery_worker, two_models, fake_openai, settings) -> str:
    """The live API with two models that answer at once and a few voted battles."""
    # A panel that writes its own question asks the question model (the live server is its
    # own process, so the default's slug, served by the fake; missing, a 503 names it).
    question_model = make_model(fake_openai, settings.ARENA_PANEL_QUESTION_MODEL)
    keyless(fake_openai, [*two_models, question_model])
    for choice in ("left_better", "tie"):
        vote_on(answered_battle(), choice=choice)
    from leaderboard.models import RunTrigger
    from leaderboard.runs.services import ratings_run

    ratings_run(trigger=RunTrigger.COMMAND)
    # The debate library (personas, topics) that earlier tests' flushes may have removed:
    # without it a debate cannot start (a 503, which schemathesis counts as a failure).
    call_command("load_debate_library", verbosity=0)
    return asgi_live_server


@pytest.mark.parametrize("with_session", [False, True], ids=["no session", "a session"])
def test_every_operation_keeps_its_documented_contract(live_api, with_session):
    failures = contract_failures(f"{live_api}/api/openapi.json", at_least=12,
                                 session_key=visitor_session_key() if with_session else None)
    # Work the requests started (debates run on in the background) ends before the test
    # does, so the database is not flushed under a running step.
    wait_for(no_step_unfinished, timeout=120, what="the steps the requests started")
    assert failures == [], "\n\n".join(failures)


SEED_001 = ["POST /api/sessions", "GET /api/sessions", "GET /api/sessions/user/{user_id}",
            "GET /api/battles/session/{sid}", "POST /api/votes"]


def test_seed_001s_own_paths_keep_their_contract(live_api):
    """Seed 001's paths with more generated requests than the rest, then once each with the
    ids of a real visitor (generated ids only ever find nothing): the answers a client of
    the seed reads keep the documented schema too."""
    key = visitor_session_key()
    failures = contract_failures(f"{live_api}/api/openapi.json", at_least=len(SEED_001),
                                 session_key=key, labels=SEED_001, max_examples=30)
    wait_for(no_step_unfinished, timeout=120, what="the steps the requests started")
    assert failures == [], "\n\n".join(failures)

    schema_url = f"{live_api}/api/openapi.json"
    thread = ThreadFactory(session_key=key)
    voted, open_ = (answered_battle(session_key=key, thread=thread) for _ in range(2))
    vote_on(voted, choice="tie")

    def call(label, **case):
        return call_validated(schema_url, label, session_key=key, **case)

    mine = call("GET /api/sessions/user/{user_id}",
                path_parameters={"user_id": user_id_of(session_key=key)})
    assert mine.status_code == 200 and str(thread.pk) in mine.text
    battles = call("GET /api/battles/session/{sid}", path_parameters={"sid": str(thread.pk)})
    assert [b["status"] for b in battles.json()["battles"]] == ["voted", "ongoing"]
    assert call("POST /api/votes", body={"battle_id": str(open_.pk), "vote": "tie"}
                ).status_code == 200
    started = call("POST /api/sessions", body={"prompt": "Name a sea."})
    assert started.status_code == 201 and len(started.json()["responses"]) == 2

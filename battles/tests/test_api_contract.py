"""The whole JSON API keeps the contract its OpenAPI file states: schemathesis generates
requests for every operation from /api/openapi.json and sends them to a live server (daphne,
a real worker, fake providers); no answer may be a 5xx, carry an undocumented status or
content type, or break its documented schema."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.management import call_command
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from arena.testing.live import worker_idle
from arena.testing.waiting import wait_for
from battles import services
from battles.tests.factories import answered_battle

pytestmark = pytest.mark.browser  # needs the live server, like the page tests

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


@pytest.fixture
def live_api(asgi_live_server, celery_worker, two_models, fake_openai, settings) -> str:
    """The live API with two models that answer at once and a few voted battles."""
    fake_openai.api_key = None
    fake_openai.token_delay = 0
    for model in two_models:
        model.api_key_env = ""
        model.save(update_fields=["api_key_env"])
    for choice in ("left_better", "tie"):
        services.battle_vote(battle=answered_battle(), choice=choice)
    from leaderboard.models import RunTrigger
    from leaderboard.services import ratings_run

    ratings_run(trigger=RunTrigger.COMMAND)
    # The debate library (personas, topics) that earlier tests' flushes may have removed:
    # without it a debate cannot start (a 503, which schemathesis counts as a failure).
    call_command("load_debate_library", verbosity=0)
    return asgi_live_server


def test_every_operation_keeps_its_documented_contract(live_api):
    # schemathesis' own pytest plugin does not run under pytest 9; its Python API does.
    schema = schemathesis.openapi.from_url(f"{live_api}/api/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 12
    failures: list[str] = []
    for operation in operations:
        @given(case=operation.as_strategy())
        @hypothesis_settings(max_examples=12, deadline=None, derandomize=True,
                             database=None, phases=[Phase.explicit, Phase.generate],
                             suppress_health_check=list(HealthCheck))
        def keeps_contract(case):
            case.call_and_validate(checks=CHECKS)

        try:
            keeps_contract()
        except Exception as exc:  # every operation is tried; all failures are reported
            failures.append(f"{operation.label}: {exc}")
    # Work the requests started (debates run on in the background) ends before the test
    # does, so the database is not flushed under a running step.
    wait_for(no_step_unfinished, timeout=120, what="the steps the requests started")
    wait_for(worker_idle, what="the worker to be idle")
    assert failures == [], "\n\n".join(failures)


def no_step_unfinished() -> bool:
    from arena.steps import FINISHED, step_models

    return not any(m.objects.exclude(status__in=FINISHED).exists() for m in step_models())

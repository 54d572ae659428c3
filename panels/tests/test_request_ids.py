"""The steps a panel's request started, and the steps those steps sent, log with the id of
that request (arena.logs): the answers are sent by the request, the judgements by the last
answer's step in the worker."""

import json
import threading

import pytest
from django.test import Client

from panels.tests.panel_support import panel_setup, wait_finished, wait_for, worker_idle
from testkit.logs import records_of


@pytest.fixture
def panel_models(celery_worker, fake_openai, fake_anthropic, settings, monkeypatch):
    yield panel_setup(fake_openai, fake_anthropic, settings, monkeypatch)
    wait_for(worker_idle)  # nothing may touch the database while it is flushed


def test_the_judgements_the_answers_sent_log_with_the_id_of_the_request(panel_models):
    with records_of("panels", "arena.llm") as records:
        response = Client().post("/api/panel/run", data=json.dumps({"question": "What is 2+2?"}),
                                 content_type="application/json")
        assert response.status_code == 200, response.content
        wait_finished(response.json()["panel_id"])
    request_id = response["X-Request-ID"]
    judged = [r for r in records if r.name == "panels.steps" and " judged " in r.getMessage()]
    calls = [r for r in records if r.getMessage().startswith("LLM call ok")]
    assert len(judged) == 3 and len(calls) == 6  # three answers, three judgements
    assert {r.request_id for r in judged + calls} == {request_id}
    assert threading.get_ident() not in {r.thread for r in judged}  # the worker's, not ours

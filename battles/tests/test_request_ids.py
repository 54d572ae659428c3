"""A battle's answers are written by the worker under the id of the request that asked for
them (arena.logs): the id the response names is on the worker's lines for that battle."""

import json
import threading

from django.test import Client

from testkit.logs import records_of


def post(client: Client, url: str, payload: dict):
    return client.post(url, data=json.dumps(payload), content_type="application/json")


def test_each_requests_answers_log_with_its_own_id(celery_worker, two_models):
    """Two requests, four steps on the worker's threads, each with the id of its request
    (a thread that ran the first request's step keeps nothing of it for the second's)."""
    client = Client()
    with records_of("arena.llm") as records:
        created = post(client, "/api/battles", {"prompt": "What is the capital of France?"})
        assert created.status_code == 200, created.content
        battle_id = created.json()["battle_id"]
        followed = post(client, f"/api/battles/{battle_id}/messages", {"prompt": "And Spain?"})
        assert followed.status_code == 200, followed.content
    first, second = created["X-Request-ID"], followed["X-Request-ID"]
    assert first != second
    # Both answers are written before the API answers, so their lines are there.
    calls = [r for r in records if r.getMessage().startswith("LLM call ok")]
    assert sorted(r.request_id for r in calls) == sorted([first, first, second, second])
    assert threading.get_ident() not in {r.thread for r in calls}  # the worker's, not ours

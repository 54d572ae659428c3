"""A provider that streams half an answer and then dies, through a whole battle (the API,
a real worker, the fake provider): the answer is written again from the start and saved
once, whole; when every attempt dies the side fails with a reason, the other side's answer
is kept, and the battle can be retried."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from battles.models import Battle, Response
from testkit.fake_providers import Behaviour

pytestmark = pytest.mark.django_db(transaction=True)


def post(client: Client, url: str, payload: dict):
    return client.post(url, data=json.dumps(payload), content_type="application/json")


def test_half_an_answer_then_a_dropped_line_is_written_again_whole(
        celery_worker, two_models, fake_openai, fast_llm_retries):
    fake_openai.reply_text = "One two three four five six seven eight nine ten."
    fake_openai.script(Behaviour.cut_stream(after_tokens=4))  # the first call dies mid-answer
    response = post(Client(), "/api/battles", {"prompt": "Count to ten."})
    assert response.status_code == 200, response.content
    texts = [r["text"] for r in response.json()["responses"]]
    assert texts == [fake_openai.reply_text] * 2  # no half answer left in front of either
    attempts = sorted(Response.objects.values_list("attempts", flat=True))
    assert attempts == [1, 2]
    assert len(fake_openai.chat_requests) == 3


def test_a_side_whose_every_attempt_dies_fails_with_a_reason_and_can_be_retried(
        celery_worker, two_models, fake_openai, fast_llm_retries):
    fake_openai.reply_text = "A short and complete answer."
    fake_openai.default = Behaviour.cut_stream(after_tokens=2)
    client = Client()
    response = post(client, "/api/battles", {"prompt": "Say something."})
    assert response.status_code == 502
    detail = response.json()["detail"]
    assert "failed" in detail and "retry" in detail.lower()
    battle_id = str(Battle.objects.get().id)
    assert Response.objects.filter(status="failed").count() == 2
    fake_openai.default = Behaviour.ok()
    retried = post(client, f"/api/battles/{battle_id}/retry", {"position": "left"})
    assert retried.status_code == 502  # the right side still failed: it says so
    assert "The right answer failed" in retried.json()["detail"]
    retried = post(client, f"/api/battles/{battle_id}/retry", {"position": "right"})
    assert retried.status_code == 200
    assert [r["text"] for r in retried.json()["responses"]] == [fake_openai.reply_text] * 2

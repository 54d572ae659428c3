"""No figure of one side reaches the person before the vote (issue 33, findings 3 and 7).

The attacks: a follow-up "too long" message quoted the short side's own token estimate and
budget ("about 3,817 tokens ... 3,566 with room for its answer"), which next to the public
context windows names the model; each side's ``latency_ms`` was in the API before the vote
(a timing fingerprint); a cut answer's note said how many tokens its model may write; a
failed side quoted its provider's HTTP status."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.test import Client

from arena.errors import RuleError
from arena.llm.errors import status_error
from arena.models import AIModel
from arena.steps import StepStatus
from battles import services
from battles.models import Slot
from battles.tests.factories import answered_battle, vote_on
from testkit.fake_providers import Behaviour
from testkit.visitors import visitor_session_key
from testkit.waiting import wait_for

pytestmark = pytest.mark.django_db

LATENCY = 4321  # a figure no other part of the page shows


def visitor() -> tuple[Client, str]:
    key = visitor_session_key()
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = key
    return client, key


def test_the_too_long_message_is_the_same_whichever_side_is_short_and_has_no_figure(
        two_models):
    alpha, beta = two_models
    AIModel.objects.filter(pk=alpha.pk).update(context_tokens=4096)
    AIModel.objects.filter(pk=beta.pk).update(context_tokens=100_000)
    said = []
    for a_position in ("left", "right"):
        battle = answered_battle(model_a=alpha, model_b=beta, model_a_position=a_position)
        with pytest.raises(RuleError) as refused:
            services.battle_follow_up(battle=battle, prompt="word " * 2500)
        said.append(refused.value.message)
    assert said[0] == said[1] == services.CONVERSATION_OVER_CONTEXT
    assert not re.search(r"\d", said[0])


def test_no_side_has_a_timing_before_the_vote(two_models):
    client, key = visitor()
    battle = answered_battle(session_key=key, thread__session_key=key)
    battle.turns.get().responses.update(latency_ms=LATENCY)
    before = client.get(f"/api/battles/{battle.pk}").json()
    assert [r["latency_ms"] for m in before["messages"] for r in m["responses"]] == [None, None]
    assert str(LATENCY) not in client.get(f"/battle/{battle.pk}/").content.decode()
    vote_on(battle, choice="tie")
    after = client.get(f"/api/battles/{battle.pk}").json()
    assert [r["latency_ms"] for m in after["messages"] for r in m["responses"]] == [LATENCY] * 2


def test_a_cut_answer_does_not_say_how_long_its_model_may_write_before_the_vote(two_models):
    client, key = visitor()
    battle = answered_battle(session_key=key, thread__session_key=key)
    battle.turns.get().responses.filter(slot=Slot.A).update(cut_at_limit=True,
                                                            output_tokens=777)
    page = client.get(f"/battle/{battle.pk}/").content.decode()
    # (the figure as a page would say it: a bare "777" may be part of a battle's id)
    assert "Stopped at the length limit" in page and "777 tokens" not in page
    vote_on(battle, choice="tie")
    assert "777 tokens" in client.get(f"/battle/{battle.pk}/").content.decode()


@pytest.mark.parametrize("status", [400, 401, 429, 500, 529])
def test_a_failure_is_said_without_its_providers_status(status):
    error = status_error(status, "detail from the provider")
    assert str(status) not in error.blind_message
    assert error.blind_message == type(error).default_user_message


@pytest.mark.django_db(transaction=True)
def test_a_failed_side_is_shown_without_its_providers_status(celery_worker, two_models,
                                                             fake_openai, fast_llm_retries):
    fake_openai.script(*[Behaviour.status(529, "overloaded")] * 6)
    client, key = visitor()
    battle, turn = services.battle_create(session_key=key, prompt="Hello there")
    wait_for(lambda: all(r.status == StepStatus.FAILED for r in turn.responses.all()),
             what="both sides failed")
    answer = client.get(f"/api/battles/{battle.pk}").json()
    errors = [r["error"] for m in answer["messages"] for r in m["responses"]]
    assert errors[0] == errors[1] and errors[0] and "529" not in errors[0]
    assert "529" not in client.get(f"/battle/{battle.pk}/").content.decode()

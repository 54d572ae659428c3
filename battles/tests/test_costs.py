"""A battle under the platform's costs rules (arena.llm.ledger): its calls entered as the
battle mode's, a side over its model's daily cap answered by the model's fallback (and the
answer says so), or failed with a plain reason when it has none; blind either way."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from arena.llm.types import FALLBACK, OWN
from arena.models import AIModel, ModelCall
from arena.steps import StepStatus
from battles import selectors, services
from battles.api.battles import battle_payload
from testkit.fake_providers import FakeOpenAIServer

OWNER = "session-of-owner"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fallback_server():
    server = FakeOpenAIServer().start()
    server.api_key = None  # its key variable would be the first fake's
    server.reply_text = "An answer from the fallback endpoint."
    try:
        yield server
    finally:
        server.stop()


def _spent_today(model: AIModel, cost: float) -> None:
    ModelCall.objects.create(model_slug=model.slug, provider=model.provider, ok=True,
                             cost_usd=cost, created_at=timezone.now() - timedelta(seconds=1))


def test_a_side_over_its_cap_is_answered_by_the_fallback_and_the_answer_says_so(
        step_sends, two_models, fake_openai, fallback_server, settings):
    settings.ARENA_MODEL_DAILY_SPEND_USD = 1.0
    capped = two_models[0]
    AIModel.objects.filter(pk=capped.pk).update(fallback_base_url=fallback_server.base_url)
    battle, turn = services.battle_create(session_key=OWNER, prompt="Name a colour.")
    _spent_today(capped, 1.0)  # the cap is reached once the battle has started
    step_sends.run_sent()
    answers = {battle.model_in(r.slot).pk: r for r in turn.responses.all()}
    assert all(r.status == StepStatus.DONE for r in answers.values())
    assert answers[capped.pk].served_by == FALLBACK
    assert answers[capped.pk].text == "An answer from the fallback endpoint."
    assert answers[two_models[1].pk].served_by == OWN
    entered = set(ModelCall.objects.filter(mode="battles").values_list(
        "model_slug", "endpoint", "kind", "ok"))
    assert entered == {(capped.slug, FALLBACK, "Response", True),
                       (two_models[1].slug, OWN, "Response", True)}
    view = selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))
    shown = str(battle_payload(view))  # what the page's API gives before the vote
    assert "served_by" not in shown and fallback_server.base_url not in shown


def test_a_side_over_its_cap_without_a_fallback_fails_saying_why(
        step_sends, two_models, fake_openai, settings):
    settings.ARENA_MODEL_DAILY_SPEND_USD = 1.0
    battle, turn = services.battle_create(session_key=OWNER, prompt="Name a colour.")
    _spent_today(two_models[0], 1.0)
    step_sends.run_sent()
    capped = next(r for r in turn.responses.all() if battle.model_in(r.slot) == two_models[0])
    assert capped.status == StepStatus.FAILED
    assert "spent its budget for today" in capped.error
    assert two_models[0].name not in capped.error  # blind: the reason names no model
    assert len(fake_openai.chat_requests) == 1  # the other side's call only

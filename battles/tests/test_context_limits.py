"""No dead ends: prompts over a model's context window are refused before any call, and a
failed answer still leaves the person a vote."""

import pytest
from django.test import Client

from arena.errors import RuleError
from arena.llm.context import estimate_input_tokens, input_budget
from arena.models import AIModel
from arena.steps import StepStatus
from battles import services
from battles.models import Battle, Slot, Vote
from battles.tests.conftest import assert_blind
from battles.tests.factories import answered_battle, vote_on

OWNER = "owner-session"
# 4,096-token models (SmolLM2's window per request), answers of up to 64 tokens.
SMALL = 4096


def _limit(models, context: int | None) -> None:
    AIModel.objects.filter(pk__in=[m.pk for m in models]).update(context_tokens=context)


@pytest.mark.django_db
def test_a_prompt_over_every_models_window_is_refused_naming_the_limit(two_models, fake_openai):
    _limit(two_models, SMALL)
    prompt = "word " * 4000  # 20,000 characters: about 6,700 tokens by the estimate
    with pytest.raises(RuleError) as err:
        services.battle_create(session_key=OWNER, prompt=prompt)
    budget = input_budget(AIModel.objects.get(pk=two_models[0].pk))
    assert err.value.status == 422
    assert f"{budget:,} tokens" in err.value.message
    assert f"{estimate_input_tokens([prompt]):,} tokens" in err.value.message
    assert_blind(err.value.message, fake_openai.base_url)
    assert Battle.objects.count() == 0 and fake_openai.chat_requests == []


@pytest.mark.django_db
def test_only_models_whose_window_fits_are_drawn(two_models, fake_openai):
    alpha, beta = two_models
    AIModel.objects.create(slug="gamma-1b", name="Gammamodel", api_model="gamma-api",
                           provider="Fakeprov", provider_kind="openai",
                           base_url=fake_openai.base_url, api_key_env=fake_openai.api_key_env,
                           max_tokens=64, context_tokens=SMALL)
    _limit([alpha, beta], 100_000)
    prompt = "word " * 4000
    for _ in range(6):
        battle, _turn = services.battle_create(session_key=OWNER, prompt=prompt)
        assert {battle.model_a_id, battle.model_b_id} == {alpha.pk, beta.pk}


@pytest.mark.django_db
def test_a_follow_up_that_would_overflow_a_window_is_refused_with_a_next_step(two_models):
    battle = answered_battle(model_a=two_models[0], model_b=two_models[1])
    _limit(two_models, SMALL)
    with pytest.raises(RuleError) as err:
        services.battle_follow_up(battle=battle, prompt="word " * 4000)
    assert err.value.status == 422
    assert "Start a new battle" in err.value.message
    assert battle.turns.count() == 1
    services.battle_follow_up(battle=battle, prompt="A short follow-up?")  # still fine
    assert battle.turns.count() == 2


@pytest.mark.django_db
def test_the_api_says_too_long_without_naming_a_model(two_models, fake_openai):
    _limit(two_models, SMALL)
    response = Client().post("/api/battles", {"prompt": "word " * 4000},
                             content_type="application/json")
    assert response.status_code == 422
    assert "too long for the models here" in response.json()["detail"]
    assert_blind(response.content.decode(), fake_openai.base_url)


@pytest.mark.django_db
def test_both_bad_is_the_vote_left_when_an_answer_failed_and_it_is_not_rated():
    battle = answered_battle()
    response = battle.turns.get().responses.get(slot=Slot.B)
    response.status = StepStatus.FAILED
    response.error = "The model provider had an internal error (HTTP 500)."
    response.save()
    with pytest.raises(RuleError) as err:
        vote_on(battle, choice="left_better")
    assert err.value.message == services.ANSWER_FAILED
    vote = vote_on(battle, choice="both_bad")
    assert not vote.counts_for_rating
    assert vote.exclusion_reason == services.ANSWER_FAILED_VOTE
    assert Vote.objects.filter(battle=battle).count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_api_reports_an_answer_cut_at_its_token_cap(celery_worker, two_models):
    AIModel.objects.filter(pk=two_models[0].pk).update(max_tokens=3)
    response = Client().post("/api/battles", {"prompt": "Describe the sea in many words"},
                             content_type="application/json")
    assert response.status_code == 200
    battle = Battle.objects.get()
    cut_position = battle.position_of(Slot.A if battle.model_a_id == two_models[0].pk
                                      else Slot.B)
    flags = {r["position"]: r["cut_at_limit"] for r in response.json()["responses"]}
    assert flags == {cut_position: True,
                     ("right" if cut_position == "left" else "left"): False}

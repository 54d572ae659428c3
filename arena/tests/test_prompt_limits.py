"""The text boxes count against what the models a contest may draw can read: a battle needs two
of them to read the prompt, a panel every one (the newcomer's counter said 30,000 characters
while the two local models refused anything over about 11,500)."""

from __future__ import annotations

import pytest
from django.test import Client

from arena.llm.context import BYTES_PER_TOKEN, MESSAGE_OVERHEAD, input_budget
from arena.models import AIModel
from arena.selectors import prompt_char_limit
from testkit.registry import make_model

pytestmark = pytest.mark.django_db


def _chars(model: AIModel) -> int:
    return (input_budget(model) - MESSAGE_OVERHEAD) * BYTES_PER_TOKEN


@pytest.fixture
def three_models(fake_openai):
    return [make_model(fake_openai, "small-1", context_tokens=4096, max_tokens=512),
            make_model(fake_openai, "middle-1", context_tokens=8192, max_tokens=512),
            make_model(fake_openai, "large-1", context_tokens=128_000, max_tokens=512)]


def test_a_battle_counts_against_the_second_largest_budget_a_panel_against_the_smallest(
        three_models, settings):
    small, middle, _large = three_models
    assert prompt_char_limit() == _chars(middle)  # two models must read a battle's prompt
    assert prompt_char_limit(readers=None) == _chars(small)  # every model answers a panel
    settings.ARENA_PROMPT_MAX_CHARS = 1000
    assert prompt_char_limit() == prompt_char_limit(readers=None) == 1000


def test_a_model_that_cannot_be_used_does_not_set_the_limit(three_models):
    small, middle, large = three_models
    assert prompt_char_limit() == _chars(middle)
    # The large model's key variable is not set: it cannot be drawn.
    AIModel.objects.filter(pk=large.pk).update(api_key_env="ARENA_TEST_UNSET_KEY")
    AIModel.objects.get(pk=middle.pk).save()  # a saved model is seen at once
    assert prompt_char_limit() == _chars(small)


def test_an_unknown_context_window_sets_no_limit(fake_openai, settings):
    make_model(fake_openai, "open-1", context_tokens=None)
    make_model(fake_openai, "open-2", context_tokens=None)
    assert prompt_char_limit() == settings.ARENA_PROMPT_MAX_CHARS


def test_the_pages_count_against_the_limits(three_models):
    small, middle, _ = three_models
    battle = Client().get("/battle/").content.decode()
    assert f'data-max-chars="{_chars(middle)}"' in battle
    assert f"0 / {_chars(middle)} characters" in battle
    panel = Client().get("/panel/").content.decode()
    assert f'data-max-chars="{_chars(small)}"' in panel


def test_a_panel_question_longer_than_the_smallest_budget_is_refused_at_once(three_models):
    small = three_models[0]
    response = Client().post("/api/panel/run", {"question": "x" * (_chars(small) + 1)},
                             content_type="application/json")
    assert response.status_code == 422
    assert f"at most {_chars(small):,} characters" in response.json()["detail"]

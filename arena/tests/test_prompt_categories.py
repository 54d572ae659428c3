"""Prompt categories: each rule on a table of prompts, and the model path against the fake
OpenAI-compatible server with a scripted structured reply."""

from __future__ import annotations

import json

import pytest

from arena.prompt_categories import (
    HARD_CRITERIA,
    JUDGEMENT_SCHEMA,
    categories_from_judgement,
    category_title,
    classify_prompt,
    prompt_language,
    rule_categories,
)
from arena.testing.fake_providers import Behaviour

LONG = "Please summarise the following meeting notes for me. " + "word " * 2100

RULES = [
    # (prompt, categories the rules must find)
    ("```python\nprint('hi')\n```\nWhy does this fail?", {"coding"}),
    ("def add(a, b):\n    return a + b\nclass Foo:\n    pass", {"coding"}),
    ("Write a Python function that reverses a linked list.", {"coding"}),
    ("How do I implement a trie in Rust?", {"coding"}),
    ("Evaluate $\\int_0^1 x^2 dx$.", {"math"}),
    ("What is 17 * 23 = ?", {"math"}),
    ("Solve 3x + 5 = 20 for x.", {"math"}),
    ("What is the probability of rolling two sixes with 2 dice?", {"math"}),
    (LONG, {"long_query"}),
    # plain prompts: nothing the rules can claim
    ("Write a short poem about autumn leaves.", set()),
    ("What is the capital of Australia?", set()),
    ("Tell me about the history of the Roman empire.", set()),
    ("Can you explain what a function means in everyday language?", set()),
    ("I have 3 cats and 2 dogs; suggest names for them.", set()),
]


@pytest.mark.parametrize(("prompt", "expected"), RULES, ids=lambda v: str(v)[:40])
def test_rules(prompt, expected):
    assert rule_categories(prompt) == expected


@pytest.mark.parametrize(("prompt", "language"), [
    ("Write a poem about the sea and the wind over the waves", "en"),
    ("Écris un poème sur la mer et le vent au-dessus des vagues", "fr"),
    ("Schreib ein Gedicht über das Meer und den Wind", "de"),
    ("写一首关于大海和风的诗，要押韵", "zh"),
    ("Escribe un poema sobre el mar y el viento", "es"),
    ("hi", "und"),  # too short to tell
    ("```\nx = 1\n```", "und"),  # code is left out: nothing left
])
def test_language(prompt, language):
    assert prompt_language(prompt) == language


def judgement(**overrides) -> dict:
    data = {"coding": False, "math": False, "creative_writing": False,
            "instruction_following": False,
            "hard_prompt_criteria": dict.fromkeys(HARD_CRITERIA, False)}
    data.update(overrides)
    return data


def test_a_prompt_is_hard_when_it_meets_six_of_the_seven_criteria():
    six = {name: i < 6 for i, name in enumerate(HARD_CRITERIA)}
    five = {name: i < 5 for i, name in enumerate(HARD_CRITERIA)}
    assert categories_from_judgement(judgement(hard_prompt_criteria=six)) == {"hard_prompt"}
    assert categories_from_judgement(judgement(hard_prompt_criteria=five)) == set()
    assert categories_from_judgement(judgement(creative_writing=True, math=True)) \
        == {"creative_writing", "math"}


def test_titles():
    assert category_title("creative_writing") == "Creative writing"
    assert category_title("lang-en") == "Language: English"
    assert category_title("lang-xx") == "Language: xx"


async def test_the_model_adds_its_judgement_to_the_rules(fake_openai):
    hard = dict.fromkeys(HARD_CRITERIA, True)
    fake_openai.reply_text = json.dumps(judgement(creative_writing=True,
                                                  instruction_following=True,
                                                  hard_prompt_criteria=hard))
    prompt = "Write a sonnet in exactly 14 lines about 3 * 4 = 12, rhyming ABAB CDCD EFEF GG."
    result = await classify_prompt(prompt, fake_openai.endpoint("classifier"))
    assert result.method == "rules+model" and result.note == ""
    assert result.categories == {"math", "creative_writing", "instruction_following",
                                 "hard_prompt"}
    assert result.language == "en" and "lang-en" in result.tags
    sent = fake_openai.chat_requests[-1].body
    assert sent["response_format"]["json_schema"]["schema"] == JUDGEMENT_SCHEMA
    assert prompt in sent["messages"][-1]["content"]


async def test_a_failing_model_leaves_the_rules_and_says_why(fake_openai, fast_llm_retries):
    fake_openai.script(*[Behaviour.status(500, "boom")] * 5)
    result = await classify_prompt("```js\nconsole.log(1)\n```", fake_openai.endpoint("c"))
    assert result.method == "rules" and result.categories == {"coding"}
    assert result.note.startswith("the classifier model failed:")


async def test_without_a_model_the_rules_stand_alone():
    result = await classify_prompt("Solve x^2 = 9.", None, unavailable="no model here")
    assert result.categories == {"math"} and result.method == "rules"
    assert result.note == "no model here"

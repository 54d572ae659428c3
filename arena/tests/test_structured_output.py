"""complete_json against the fake provider servers (real HTTP) and the real local SmolLM2."""

from __future__ import annotations

import itertools
import re

import pytest

from arena.llm import (
    LLMSchemaViolation,
    complete_json,
    extract_json_object,
    schema_problem,
)
from arena.llm.json_text import INCOMPLETE_JSON, NO_JSON
from testkit.fake_providers import Behaviour

RANKING = {
    "type": "object",
    "properties": {"results": {"type": "array", "items": {"enum": ["A", "B", "C"]},
                               "minItems": 3, "maxItems": 3}},
    "required": ["results"],
    "additionalProperties": False,
}
ASK = [{"role": "user", "content": "Rank A, B and C."}]


def results_object(text: str) -> dict:
    return extract_json_object(text, want_key="results")


async def test_openai_compatible_servers_get_the_schema_as_response_format(fake_openai):
    fake_openai.reply_text = '{"results": ["B", "A", "C"]}'
    result = await complete_json(fake_openai.endpoint("judge"), ASK, RANKING, name="ranking")
    assert result.data == {"results": ["B", "A", "C"]} and result.method == "json_schema"
    sent = fake_openai.chat_requests[-1].body["response_format"]
    assert sent == {"type": "json_schema",
                    "json_schema": {"name": "ranking", "schema": RANKING, "strict": True}}
    assert result.completion.output_tokens > 0


async def test_anthropic_gets_a_forced_tool_whose_input_is_the_object(fake_anthropic):
    fake_anthropic.reply_text = '{"results": ["C", "B", "A"]}'
    result = await complete_json(fake_anthropic.endpoint("claude-judge"), ASK, RANKING,
                                 name="ranking")
    assert result.data == {"results": ["C", "B", "A"]} and result.method == "tool_use"
    body = fake_anthropic.chat_requests[-1].body
    assert body["tool_choice"] == {"type": "tool", "name": "ranking"}
    assert body["tools"][0]["name"] == "ranking" and body["tools"][0]["input_schema"] == RANKING


async def test_a_provider_that_refuses_structured_output_is_asked_plainly(fake_openai):
    fake_openai.script(Behaviour.status(400, "response_format json_schema is not supported"),
                       Behaviour.ok())
    fake_openai.reply_text = 'Sure! Here it is:\n```json\n{"results": ["A", "C", "B"],}\n```'
    result = await complete_json(fake_openai.endpoint("old"), ASK, RANKING)
    assert result.data == {"results": ["A", "C", "B"]} and result.method == "extracted"
    first, second = fake_openai.chat_requests[-2:]
    assert "response_format" in first.body and "response_format" not in second.body


async def test_any_other_rejection_is_not_retried_plainly(fake_openai):
    from arena.llm import LLMRequestRejected

    fake_openai.script(Behaviour.status(400, "messages: too long"))
    with pytest.raises(LLMRequestRejected):
        await complete_json(fake_openai.endpoint("m"), ASK, RANKING)
    assert len(fake_openai.chat_requests) == 1


@pytest.mark.parametrize(("reply", "problem"), [
    ('{"results": ["A", "B"]}', "results: ['A', 'B'] is too short"),
    ('{"results": ["A", "B", "D"]}', "results/2: 'D' is not one of ['A', 'B', 'C']"),
    ('{"ranking": ["A", "B", "C"]}', "'results' is a required property"),
    ("I think A is best.", "the reply contains no JSON object"),
    ('{"results": ["A", "B"', "results: ['A'] is too short"),  # cut: what was complete
])
async def test_a_reply_of_the_wrong_shape_is_asked_again_then_says_what_is_wrong(
        fake_openai, reply, problem):
    """The repair pass: the model hears what was wrong and answers once more; a second
    wrong answer fails with the problem for a prompt or a log, and a person's words for a
    page (never the schema's: "'claims' is a required property" reached a debate page)."""
    fake_openai.reply_text = reply
    with pytest.raises(LLMSchemaViolation) as caught:
        await complete_json(fake_openai.endpoint("m"), ASK, RANKING)
    assert problem in caught.value.problem
    assert caught.value.user_message == LLMSchemaViolation.default_user_message
    assert caught.value.reply == reply
    first, second = fake_openai.chat_requests
    assert problem in second.messages[-1]["content"]
    assert second.messages[-2] == {"role": "assistant", "content": reply}


async def test_a_second_answer_in_shape_is_taken(fake_openai):
    fake_openai.script(Behaviour.ok('{"ranking": "A"}'),
                       Behaviour.ok('{"results": ["C", "A", "B"]}'))
    result = await complete_json(fake_openai.endpoint("m"), ASK, RANKING)
    assert result.data == {"results": ["C", "A", "B"]}
    assert len(fake_openai.chat_requests) == 2


async def test_an_answer_cut_at_the_length_limit_keeps_its_complete_members(fake_openai):
    """A small model's list of claims cut mid-item: the claims written in full are used."""
    schema = {"type": "object", "required": ["claims"], "properties": {"claims": {
        "type": "array", "items": {"type": "object", "required": ["text"],
                                   "properties": {"text": {"type": "string"}}}}}}
    fake_openai.reply_text = '{"claims": [{"text": "Paris is in France"}, {"text": "The Mo'
    result = await complete_json(fake_openai.endpoint("m"), ASK, schema)
    assert result.data == {"claims": [{"text": "Paris is in France"}]}
    assert len(fake_openai.chat_requests) == 1


async def test_server_errors_are_still_retried(fake_openai, fast_llm_retries):
    fake_openai.script(Behaviour.status(500), Behaviour.ok())
    fake_openai.reply_text = '{"results": ["A", "B", "C"]}'
    result = await complete_json(fake_openai.endpoint("m"), ASK, RANKING)
    assert result.completion.attempts == 2


class TestExtractJsonObject:
    """Moved from the panel's judging tests: the extractor is the platform's now."""

    def test_plain_object(self):
        assert results_object('{"results": ["B", "A", "C"]}') == {"results": ["B", "A", "C"]}

    def test_code_fence_with_language(self):
        text = 'Here you go:\n```json\n{"results": ["C", "A", "B"]}\n```\nThanks!'
        assert results_object(text)["results"] == ["C", "A", "B"]

    def test_code_fence_without_language(self):
        assert results_object('```\n{"results": ["A"]}\n```')["results"] == ["A"]

    def test_prose_before_and_after(self):
        text = ('After careful thought, Response B is the most accurate. '
                '{"results": ["B", "C", "A"]} I hope this ranking helps.')
        assert results_object(text)["results"] == ["B", "C", "A"]

    def test_nested_objects_inside_the_answer(self):
        text = ('{"results": ["A", "B", "C"], "reasons": {"A": {"score": 9}, "B": "ok"}}')
        data = results_object(text)
        assert data["results"] == ["A", "B", "C"] and data["reasons"]["A"] == {"score": 9}

    def test_results_nested_in_another_object(self):
        text = 'Ranking: {"ranking": {"results": ["C", "B", "A"]}}'
        assert results_object(text)["results"] == ["C", "B", "A"]

    def test_an_earlier_object_without_results_is_passed_over(self):
        text = 'Scores {"A": 3, "B": 9} so: {"results": ["B", "A"]}'
        assert results_object(text)["results"] == ["B", "A"]

    def test_braces_in_prose_do_not_confuse_it(self):
        text = 'The set {A, B} is ranked: {"results": ["A", "B"]} (see {note})'
        assert results_object(text)["results"] == ["A", "B"]

    def test_trailing_comma_and_curly_quotes_are_repaired(self):
        assert results_object('{"results": ["B", "A",],}')["results"] == ["B", "A"]
        assert results_object("{\u201cresults\u201d: [\u201cA\u201d]}")["results"] == ["A"]

    @pytest.mark.parametrize("text", ["no json here", "", "[1, 2]"])
    def test_missing_json_is_an_error(self, text):
        with pytest.raises(ValueError, match=NO_JSON):
            results_object(text)

    @pytest.mark.parametrize("text", ['{"results": [A, B]}', "{'results': ['A', 'B']}",
                                      '{"results": ["A" "B"]}', '{"results": ['])
    def test_broken_json_is_an_error_that_says_so(self, text):
        with pytest.raises(ValueError, match=re.escape(INCOMPLETE_JSON)):
            results_object(text)

    @pytest.mark.parametrize(("text", "closed"), [
        ('{"results": ["A", "B"', {"results": ["A"]}),  # "B" may be cut too: dropped
        ('{"results": ["A", "B"], "note": "cut he', {"results": ["A", "B"]}),
        ('Here: {"a": {"b": [1, 2], "c": "x\\"y", "d', {"a": {"b": [1, 2], "c": 'x"y'}}),
    ])
    def test_a_cut_object_keeps_its_complete_members(self, text, closed):
        assert extract_json_object(text) == closed


def test_schema_problems_are_one_line():
    assert schema_problem({"results": ["A", "B", "C"]}, RANKING) is None
    assert schema_problem({"results": "A"}, RANKING) == "results: 'A' is not of type 'array'"


@pytest.mark.local_model
async def test_the_local_smollm2_answers_in_shape_under_the_schema():
    """llama.cpp turns the schema into a grammar: even the 135M model answers in shape."""
    from arena.llm import ModelEndpoint
    from arena.local_models.serving import LocalModelFleet
    from arena.tests.test_local_models import free_port, require_smollm2

    require_smollm2()
    port = free_port()
    with LocalModelFleet(["smollm2"], ports={"smollm2": port}) as fleet:
        endpoint = ModelEndpoint(
            slug="smollm2", provider_kind="openai", api_model="smollm2",
            base_url=fleet.running["smollm2"].base_url, api_key_env=None, max_tokens=64,
            system_prompt="You are a helpful assistant.")
        ask = [{"role": "user", "content": (
            "Three answers to 'What is 2+2?': A says 4, B says 5, C says 22. "
            "Rank them best first.")}]
        permutations = {"type": "object", "required": ["results"],
                        "additionalProperties": False,
                        "properties": {"results": {"enum": [list(p) for p in itertools
                                                            .permutations("ABC")]}}}
        shaped, ranked = [], []
        for _ in range(3):
            # Any violation of the schema would raise LLMSchemaViolation here.
            shaped.append(await complete_json(endpoint, ask, RANKING, name="ranking"))
            ranked.append(await complete_json(endpoint, ask, permutations, name="ranking"))
    assert all(r.method == "json_schema" and len(r.data["results"]) == 3 for r in shaped)
    assert all(sorted(r.data["results"]) == ["A", "B", "C"] for r in ranked)


async def test_a_caller_that_asks_again_itself_gets_no_second_ask(fake_openai):
    fake_openai.reply_text = '{"ranking": "A"}'
    with pytest.raises(LLMSchemaViolation) as caught:
        await complete_json(fake_openai.endpoint("m"), ASK, RANKING, reask=False)
    assert "'results' is a required property" in caught.value.problem
    assert len(fake_openai.chat_requests) == 1

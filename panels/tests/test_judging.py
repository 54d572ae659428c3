"""Blind judging without a database: labels, prompts, JSON extraction, permutation checks."""

import random

import pytest

from panels import judging
from panels.judging import RankingError, Shown

SHOWN = Shown(("beta", "gamma", "alpha"))  # A = beta, B = gamma, C = alpha


class TestParseRanking:
    def test_labels_map_back_to_models_through_the_judges_own_order(self):
        assert judging.parse_ranking('{"results": ["B", "C", "A"]}', SHOWN) == [
            "gamma", "alpha", "beta"]

    @pytest.mark.parametrize("results", [
        '["Response B", "response c", "A"]',
        "[2, 3, 1]",  # numbers are positions in the order shown, as seed 003 numbers answers
        '[{"label": "B"}, {"response": "C"}, {"id": "A"}]',
        '["B.", "C)", "Response #1"]',
    ])
    def test_label_spellings_are_understood(self, results):
        assert judging.parse_ranking(f'{{"results": {results}}}', SHOWN) == [
            "gamma", "alpha", "beta"]

    def test_duplicates_are_refused(self):
        with pytest.raises(RankingError, match="Response B is ranked more than once"):
            judging.parse_ranking('{"results": ["B", "B", "A"]}', SHOWN)

    def test_missing_answers_are_refused(self):
        with pytest.raises(RankingError, match="Response C is missing"):
            judging.parse_ranking('{"results": ["B", "A"]}', SHOWN)
        with pytest.raises(RankingError, match="Response A and Response C are missing"):
            judging.parse_ranking('{"results": ["B"]}', SHOWN)

    @pytest.mark.parametrize("item", ['"D"', "4", "0", '"Response Z"'])
    def test_out_of_range_labels_are_refused(self, item):
        with pytest.raises(RankingError, match="is not one of the responses"):
            judging.parse_ranking(f'{{"results": ["A", "B", {item}]}}', SHOWN)

    @pytest.mark.parametrize("results", ['"B, A, C"', '{"A": 1}', "null"])
    def test_results_must_be_a_list(self, results):
        with pytest.raises(RankingError, match="must be a list"):
            judging.parse_ranking(f'{{"results": {results}}}', SHOWN)

    @pytest.mark.parametrize("item", ["true", "1.5", '"the best one"', '{"x": 1}'])
    def test_items_that_are_not_labels_are_refused(self, item):
        with pytest.raises(RankingError, match="is not a label"):
            judging.parse_ranking(f'{{"results": ["A", "B", {item}]}}', SHOWN)

    def test_object_without_results(self):
        with pytest.raises(RankingError, match=judging.NO_RESULTS.replace('"', '.')):
            judging.parse_ranking('{"ranking": ["A", "B", "C"]}', SHOWN)


class TestPrompts:
    ANSWERS = {"alpha": "Alpha's text.", "beta": "Beta's text.", "gamma": "Gamma's text."}

    def test_judge_prompt_shows_answers_in_the_judges_order_under_neutral_labels(self):
        prompt = judging.build_judge_prompt("Why is the sky blue?", SHOWN, self.ANSWERS)
        positions = [prompt.index(f"Response {label}:\n") for label in "ABC"]
        assert positions == sorted(positions)
        assert prompt.index("Beta's text.") < prompt.index("Gamma's text.") < prompt.index(
            "Alpha's text.")
        assert "Why is the sky blue?" in prompt
        assert '{"results": [' in prompt and "A, B and C" in prompt
        for name in ("alpha", "beta", "gamma"):
            assert f"Response {name}" not in prompt.lower()

    def test_retry_prompt_states_the_error(self):
        prompt = judging.build_retry_prompt("Response B is ranked more than once", SHOWN)
        assert "Response B is ranked more than once" in prompt and "A, B and C" in prompt

    def test_each_judge_gets_its_own_shuffle(self):
        rng = random.Random(7)
        orders = {judging.shuffled_order(list("abcdef"), rng=rng) for _ in range(6)}
        assert len(orders) > 1
        assert all(sorted(order) == list("abcdef") for order in orders)

    def test_too_many_answers_for_the_labels(self):
        with pytest.raises(ValueError, match="at most 26"):
            judging.shuffled_order([str(i) for i in range(27)])

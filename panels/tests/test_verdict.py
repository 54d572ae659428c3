"""The verdict's arithmetic without a database: average ranks, self-votes, Kendall's W."""

import pytest

from panels import verdict

MODELS = ["p1", "p2", "p3"]
# Seed 003's data-flow example: three judges, rankings best first.
RANKINGS = {
    "p1": ["p2", "p3", "p1"],
    "p2": ["p1", "p3", "p2"],
    "p3": ["p1", "p2", "p3"],
}


def test_average_rank_best_first():
    rows = verdict.average_ranks(MODELS, RANKINGS)
    assert [(r.model, round(r.average_rank, 2), r.position) for r in rows] == [
        ("p1", 1.67, 1), ("p2", 2.0, 2), ("p3", 2.33, 3)]
    assert rows[0].ranks == {"p1": 3, "p2": 1, "p3": 1}
    assert all(r.judges == 3 for r in rows)


def test_equal_averages_share_a_position():
    rows = verdict.average_ranks(["a", "b"], {"a": ["a", "b"], "b": ["b", "a"]})
    assert [r.position for r in rows] == [1, 1]
    assert [r.average_rank for r in rows] == [1.5, 1.5]


def test_self_ranks_are_reported():
    assert verdict.self_ranks(RANKINGS) == {"p1": 3, "p2": 3, "p3": 3}


def test_excluding_self_votes_reranks_the_others_and_changes_the_winner():
    # Every judge puts itself first; among the others, all prefer b.
    rankings = {"a": ["a", "b", "c"], "b": ["b", "a", "c"], "c": ["c", "b", "a"]}
    with_self = verdict.average_ranks(["a", "b", "c"], rankings)
    assert [(r.model, round(r.average_rank, 2)) for r in with_self] == [
        ("b", 1.67), ("a", 2.0), ("c", 2.33)]
    without = verdict.average_ranks(["a", "b", "c"], rankings, exclude_self=True)
    assert [(r.model, r.average_rank, r.judges) for r in without] == [
        ("b", 1.0, 2), ("a", 1.5, 2), ("c", 2.0, 2)]
    assert without[0].ranks == {"a": 1, "c": 1}  # b is not scored by itself


def test_a_model_nobody_else_judged_comes_last_without_an_average():
    rows = verdict.average_ranks(["a", "b"], {"a": ["a", "b"]}, exclude_self=True)
    assert [(r.model, r.average_rank, r.position) for r in rows] == [
        ("b", 1.0, 1), ("a", None, 2)]


class TestKendallsW:
    def test_identical_rankings_agree_fully(self):
        assert verdict.kendalls_w([["a", "b", "c"]] * 4) == pytest.approx(1.0)

    def test_reversed_rankings_do_not_agree(self):
        assert verdict.kendalls_w([["a", "b", "c", "d"], ["d", "c", "b", "a"]]) == 0.0

    def test_seed_example(self):
        # Rank sums: p1 = 5, p2 = 6, p3 = 7; mean 6; S = 2; W = 12*2 / (9 * 24) = 1/9.
        assert verdict.kendalls_w(list(RANKINGS.values())) == pytest.approx(1 / 9)

    def test_textbook_example(self):
        # Three judges, four items, rank sums 4, 6, 9, 11: S = 29, W = 12*29 / (9 * 60).
        rankings = [["a", "b", "c", "d"], ["a", "c", "b", "d"], ["b", "a", "d", "c"]]
        sums = {"a": 1 + 1 + 2, "b": 2 + 3 + 1, "c": 3 + 2 + 4, "d": 4 + 4 + 3}
        mean = 3 * 5 / 2
        s = sum((v - mean) ** 2 for v in sums.values())
        assert verdict.kendalls_w(rankings) == pytest.approx(12 * s / (9 * 60))

    def test_undefined_for_one_judge_or_one_item(self):
        assert verdict.kendalls_w([["a", "b"]]) is None
        assert verdict.kendalls_w([["a"], ["a"]]) is None

    def test_rankings_of_different_items_are_refused(self):
        with pytest.raises(ValueError, match="same items"):
            verdict.kendalls_w([["a", "b"], ["a", "c"]])


def test_verdict_has_both_standings_self_ranks_and_w():
    data = verdict.verdict(MODELS, RANKINGS)
    assert [r["model"] for r in data["standings"]] == ["p1", "p2", "p3"]
    assert data["standings_without_self_votes"][0]["judges"] == 2
    assert data["self_ranks"] == {"p1": 3, "p2": 3, "p3": 3}
    assert data["kendall_w"] == round(1 / 9, 4)
    assert data["judges_counted"] == 3 and data["answers"] == 3


def test_pairwise_outcomes_one_per_pair_in_slug_order():
    pairs = verdict.pairwise_outcomes(["c", "a", "b"])
    assert sorted(pairs) == [("a", "b", "model_a"), ("a", "c", "model_b"),
                             ("b", "c", "model_b")]

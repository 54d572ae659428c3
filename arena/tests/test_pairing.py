"""The pair picker every mode draws its two sides with, each mode passing its rule."""

import random

import numpy as np
import pytest

from arena.contests.pairing import NOT_A_CANDIDATE, NOT_TWO, pair_pick


def test_without_a_rule_every_pair_and_either_order_comes_up():
    rng = random.Random(1)
    seen = {pair_pick("abcd", rng=rng) for _ in range(400)}
    assert seen == {(x, y) for x in "abcd" for y in "abcd" if x != y}


def test_a_rule_decides_which_pairs_meet():
    only_ab = np.zeros((3, 3))
    only_ab[0, 1] = only_ab[1, 0] = 1.0
    rng = random.Random(2)
    picks = [pair_pick("abc", rule=lambda pool: only_ab, rng=rng) for _ in range(200)]
    assert set(picks) == {("a", "b"), ("b", "a")}


def test_a_chosen_side_keeps_its_candidate_and_the_other_side_is_drawn():
    rng = random.Random(3)
    as_a = {pair_pick("abcd", chosen=("c", None), rng=rng) for _ in range(200)}
    assert as_a == {("c", "a"), ("c", "b"), ("c", "d")}
    as_b = {pair_pick("abcd", chosen=(None, "a"), rng=rng) for _ in range(200)}
    assert as_b == {("b", "a"), ("c", "a"), ("d", "a")}
    assert pair_pick("abcd", chosen=("d", "b"), rng=rng) == ("d", "b")


def test_a_pair_needs_two_candidates_and_a_chosen_side_among_them():
    with pytest.raises(ValueError, match=NOT_TWO):
        pair_pick(["a"])
    with pytest.raises(ValueError, match=NOT_A_CANDIDATE):
        pair_pick("ab", chosen=("z", None))

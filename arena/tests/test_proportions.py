"""The Wilson interval every mode's win rates use agrees with SciPy's (which the web
processes do not load: arena/tests/test_process_start.py)."""

import pytest
from scipy.stats import binomtest

from arena.contests.proportions import wilson_interval


@pytest.mark.parametrize(("hits", "n"), [(0, 1), (1, 1), (1, 2), (2, 3), (36, 40), (0, 50),
                                         (700, 1000)])
def test_it_is_scipys_wilson_interval(hits, n):
    expected = binomtest(hits, n).proportion_ci(0.95, method="wilson")
    assert wilson_interval(hits, n) == pytest.approx((expected.low, expected.high), abs=1e-9)


def test_no_votes_is_the_whole_range():
    assert wilson_interval(0, 0) == (0.0, 1.0)

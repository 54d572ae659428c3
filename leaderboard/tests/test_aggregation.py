"""The text board's SQL aggregation against a plain Python count of the same votes."""

from collections import Counter

import pytest

from battles.boards import TEXT_BOARD
from battles.models import Vote
from leaderboard.boards import get_board
from leaderboard.runs import compute

from .factories import make_votes

pytestmark = pytest.mark.django_db


def test_sql_aggregation_equals_a_python_count_of_counted_votes():
    make_votes(
        [
            ("alpha", "beta", "model_a", 7),
            ("beta", "alpha", "model_a", 3),
            ("alpha", "beta", "tie", 2),
            ("alpha", "gamma", "both_bad", 4),
            ("gamma", "beta", "model_b", 5),
        ]
    )
    make_votes([("alpha", "beta", "model_b", 6)], counts_for_rating=False)  # leaked: not rated
    make_votes([("gamma", "alpha", "model_a", 2)], is_demo=True)  # demo battles do count

    expected = Counter(
        (v.battle.model_a_id, v.battle.model_b_id, v.winner)
        for v in Vote.objects.select_related("battle")
        if v.counts_for_rating
    )
    rows = list(TEXT_BOARD.outcomes())
    got = {(a, b, w): n for a, b, w, n in rows}

    assert got == dict(expected)
    assert len(rows) == len(got)  # grouped: one row per (pair, result)
    assert sum(got.values()) == 7 + 3 + 2 + 4 + 5 + 2
    assert ("alpha", "beta", "model_b") not in got


def test_aggregation_is_one_grouped_query(django_assert_num_queries):
    make_votes([("alpha", "beta", "model_a", 50), ("beta", "alpha", "tie", 20)])
    with django_assert_num_queries(1) as ctx:
        rows = list(TEXT_BOARD.outcomes())
    assert "GROUP BY" in ctx.captured_queries[0]["sql"].upper()
    assert sorted(rows) == [("alpha", "beta", "model_a", 50), ("beta", "alpha", "tie", 20)]


def test_tallies_count_both_bad_apart_and_as_neither_win_nor_loss():
    make_votes(
        [
            ("alpha", "beta", "model_a", 3),
            ("beta", "alpha", "model_a", 1),
            ("alpha", "beta", "both_bad", 2),
            ("alpha", "beta", "tie", 1),
        ]
    )
    grouped = compute.group_rows(get_board("text").outcomes())
    t = compute.tally(grouped)
    i = grouped.subjects.index("alpha")
    assert (t.votes[i], t.wins[i], t.losses[i], t.ties[i], t.both_bad[i]) == (7, 3, 1, 1, 2)
    assert t.win_rate[i] == pytest.approx(3 / 7)


def test_period_aggregation_groups_by_day():
    make_votes([("alpha", "beta", "model_a", 4)])
    rows = list(TEXT_BOARD.period_outcomes())
    assert len(rows) == 1 and rows[0][1:] == ("alpha", "beta", "model_a", 4)
    from datetime import UTC, date, datetime

    assert rows[0][0] == (datetime.now(UTC).date() - date(1970, 1, 1)).days

"""A board's votes read once as arrays (leaderboard.scans): the same votes whichever way the
database is read, grouped as the SQL GROUP BY groups them."""

from __future__ import annotations

import numpy as np
import pytest

from arena.prompt_categories import category_tags
from battles.boards import TEXT_BOARD
from battles.models import Vote
from leaderboard.runs import compute
from leaderboard.runs.reading import category_masks, scan_grouped, scan_groups
from leaderboard.scans import language_code, language_number

from .factories import make_votes


def test_language_codes_round_trip():
    for code in ("en", "zh", "pcm"):
        assert language_code(language_number(code)) == code
    assert language_number("und") == language_number("") == 0


@pytest.mark.django_db(transaction=True)  # committed: on PostgreSQL the scan reads in halves
def test_the_scan_holds_every_counted_vote_as_the_database_has_it():
    make_votes([("alpha", "beta", "model_a", 7), ("beta", "gamma", "tie", 3)],
               categories=("coding", "lang-en"))
    make_votes([("gamma", "alpha", "both_bad", 4), ("alpha", "beta", "model_b", 2)],
               categories=("math",))
    make_votes([("alpha", "gamma", "model_a", 5)], counts_for_rating=False)
    for n, vote in enumerate(Vote.objects.order_by("pk")):
        Vote.objects.filter(pk=vote.pk).update(tokens_a=10 * n, bold_b=n % 3, lists_a=1200)
    scan = TEXT_BOARD.vote_scan()
    assert scan.a.size == 16  # the uncounted five are left out
    expected = sorted(
        (v.model_a_id, v.model_b_id, v.winner, v.tokens_a, min(v.lists_a, 1023), v.bold_b,
         frozenset(category_tags(v.categories, v.language)))
        for v in Vote.objects.filter(counts_for_rating=True))
    codes = ("model_a", "model_b", "tie", "both_bad")
    masks = category_masks(scan)
    got = sorted(
        (scan.subjects[scan.a[i]], scan.subjects[scan.b[i]], codes[scan.code[i]],
         scan.style_a[i, 0], scan.style_a[i, 2], scan.style_b[i, 3],
         frozenset(name for name, mask in masks.items() if mask[i]))
        for i in range(scan.a.size))
    assert got == expected

    grouped, _position = scan_grouped(scan, scan_groups(scan))
    by_sql = compute.group_rows(TEXT_BOARD.outcomes())
    assert grouped.subjects == by_sql.subjects
    assert sorted(zip(grouped.a, grouped.b, grouped.code, grouped.count, strict=True)) == \
        sorted(zip(by_sql.a, by_sql.b, by_sql.code, by_sql.count, strict=True))
    math, _ = scan_grouped(scan, scan_groups(scan), masks["math"])
    assert math.total == 6 and np.all(np.isin(math.code, [1, 3]))

"""The leaderboard's plain-SQL paths give what the ORM gives on the same data: a snapshot's
entries written by COPY (leaderboard.runs.fast_insert), a board's votes read as packed arrays
(leaderboard.scans) and in order from a plain cursor, its days counted in SQL
(leaderboard.querysets), and the online Elo's statements per vote
(leaderboard.runs.online_elo). On SQLite some of them are the ORM's own way; CI runs them on
PostgreSQL, where each is the plain statement."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from battles.boards import TEXT_BOARD
from battles.models import Vote
from leaderboard.models import BoardSnapshot, EloBoardState, OnlineElo, SnapshotEntry
from leaderboard.runs.fast_insert import insert_plain
from leaderboard.runs.online_elo import online_elo_apply, online_elo_replay
from leaderboard.scans import language_number

from .factories import make_votes

ENTRY_VALUES = [
    {"subject": "alpha", "name": "Tab\there, back\\slash, new\nline", "organization": "Ünï",
     "license": "", "deprecated": True, "provisional": False, "rating": 1012.345678901,
     "ci_lower": 990.5, "ci_upper": 1033.25, "rank_ub": 1, "rank_ub_active": 0, "votes": 70,
     "wins": 40, "losses": 20, "ties": 6, "both_bad": 4, "win_rate": 4 / 7,
     "style_rating": None, "style_ci_lower": None, "style_ci_upper": None},
    {"subject": "beta", "name": "'quoted' \"both\" ways, a ; and a \\N", "organization": "",
     "license": "MIT", "deprecated": False, "provisional": True, "rating": -3.5e-7,
     "ci_lower": -1e300, "ci_upper": 1e300, "rank_ub": 0, "rank_ub_active": 0, "votes": 0,
     "style_rating": 1001.0, "style_ci_lower": 980.0, "style_ci_upper": 1022.0,
     "style_rank_ub": 2, "style_rank_ub_active": 1},
]


def _stored_entries(snapshot: BoardSnapshot) -> list[dict]:
    fields = [f.attname for f in SnapshotEntry._meta.concrete_fields
              if f.attname not in ("id", "snapshot_id")]
    return list(snapshot.entries.order_by("subject").values(*fields))


@pytest.mark.django_db
def test_entries_written_by_copy_are_the_entries_bulk_create_writes():
    plain, orm = (BoardSnapshot.objects.create(board="text", method="bt", ci_method="sandwich",
                                               min_votes=1, outcomes=0, models_total=2,
                                               models_rated=1) for _ in range(2))
    insert_plain(SnapshotEntry, [SnapshotEntry(snapshot=plain, **v) for v in ENTRY_VALUES])
    SnapshotEntry.objects.bulk_create([SnapshotEntry(snapshot=orm, **v) for v in ENTRY_VALUES])
    assert _stored_entries(plain) == _stored_entries(orm)
    assert len(_stored_entries(plain)) == 2


def _vary_votes() -> None:
    """Give every vote its own style, time and language, so that no column is constant."""
    now = timezone.now()
    for n, vote in enumerate(Vote.objects.order_by("pk")):
        Vote.objects.filter(pk=vote.pk).update(
            tokens_a=13 * n, tokens_b=7 * n + 1, headers_a=n % 4, headers_b=2000 * (n % 2),
            lists_a=n, lists_b=3, bold_a=n % 5, bold_b=1024 + n,
            language=("en", "pcm", "", "und", "zh")[n % 5],
            created_at=now - timedelta(days=n % 3, seconds=n))


@pytest.mark.django_db(transaction=True)  # committed: on PostgreSQL the scan reads in halves
def test_the_vote_scan_reads_every_column_as_the_orm_does():
    make_votes([("alpha", "beta", "model_a", 6), ("gamma", "alpha", "both_bad", 4)],
               categories=("coding", "math"))
    make_votes([("beta", "gamma", "tie", 5), ("beta", "alpha", "model_b", 3)])
    make_votes([("alpha", "gamma", "model_a", 2)], counts_for_rating=False)
    _vary_votes()

    scan = TEXT_BOARD.vote_scan()
    codes = ("model_a", "model_b", "tie", "both_bad")
    got = sorted(
        (scan.subjects[scan.a[i]], scan.subjects[scan.b[i]], codes[scan.code[i]],
         *scan.style_a[i].tolist(), *scan.style_b[i].tolist(), int(scan.categories[i]),
         int(scan.language[i]))
        for i in range(scan.a.size))

    def capped(n: int) -> int:  # a Markdown count is read as at most 1023 on every database
        return min(n, 1023)

    expected = sorted(
        (v.model_a_id, v.model_b_id, v.winner, v.tokens_a, capped(v.headers_a),
         capped(v.lists_a), capped(v.bold_a), v.tokens_b, capped(v.headers_b),
         capped(v.lists_b), capped(v.bold_b), v.categories, language_number(v.language))
        for v in Vote.objects.filter(counts_for_rating=True))
    assert got == expected
    assert len(got) == 18


@pytest.mark.django_db
def test_outcomes_in_order_are_the_orms_rows_in_order():
    make_votes([("alpha", "beta", "model_a", 4), ("beta", "gamma", "tie", 3)])
    make_votes([("gamma", "alpha", "model_b", 2)], counts_for_rating=False)
    _vary_votes()
    counted = Vote.objects.filter(counts_for_rating=True).order_by("created_at", "pk")
    since = counted[2].created_at

    for after in (None, since):
        rows = list(TEXT_BOARD.ordered_outcomes(since=after))
        orm = counted if after is None else counted.filter(created_at__gt=after)
        expected = list(orm.values_list("model_a_id", "model_b_id", "winner", "created_at"))
        assert [row[:3] for row in rows] == [row[:3] for row in expected]
        # A time is a datetime, or POSIX seconds where read from a plain cursor.
        times = [t if isinstance(t, datetime) else datetime.fromtimestamp(t, tz=UTC)
                 for *_, t in rows]
        assert all(abs(got - want) < timedelta(microseconds=2)
                   for got, (*_, want) in zip(times, expected, strict=True))


@pytest.mark.django_db
def test_outcomes_per_day_are_a_python_count_of_each_votes_utc_day():
    make_votes([("alpha", "beta", "model_a", 5), ("beta", "alpha", "tie", 4)])
    _vary_votes()
    epoch = datetime(1970, 1, 1, tzinfo=UTC).date()
    expected = Counter(
        ((v.created_at.astimezone(UTC).date() - epoch).days, v.model_a_id, v.model_b_id,
         v.winner)
        for v in Vote.objects.filter(counts_for_rating=True))
    rows = list(TEXT_BOARD.period_outcomes())
    assert {tuple(row[:4]): row[4] for row in rows} == dict(expected)
    assert [row[0] for row in rows] == sorted(row[0] for row in rows)


@pytest.mark.django_db
def test_the_online_elo_applied_vote_by_vote_is_the_table_a_replay_writes():
    """Each vote's three plain statements (online_elo_apply) against the replay, which
    rates every vote in order and writes the table through the ORM."""
    make_votes([("alpha", "beta", "model_a", 5), ("beta", "gamma", "both_bad", 3),
                ("gamma", "alpha", "tie", 2), ("delta", "alpha", "model_b", 4)])
    _vary_votes()
    for a, b, winner, _time in TEXT_BOARD.ordered_outcomes():
        online_elo_apply(board_name="text", subject_a=a, subject_b=b, winner=winner)

    def table() -> dict:
        return {row.subject: (row.rating, row.votes)
                for row in OnlineElo.objects.filter(board="text")}

    applied = table()
    assert online_elo_replay(board_name="text") == 14
    replayed = table()
    assert sorted(replayed) == sorted(applied) == ["alpha", "beta", "delta", "gamma"]
    for subject, (rating, votes) in applied.items():
        assert replayed[subject] == (pytest.approx(rating, abs=1e-9), votes)
    assert EloBoardState.objects.get(board="text").outcomes_applied == 14

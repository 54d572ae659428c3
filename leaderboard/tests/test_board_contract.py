"""A board built from a queryset and a pair: checked when it is built, and it reads its
outcomes every way the contract asks for from that one queryset."""

import pytest

from battles.models import Battle, Vote
from leaderboard.boards import Board

from .factories import make_votes


def test_a_board_whose_pair_is_not_model_a_and_model_b_is_refused():
    with pytest.raises(ValueError, match="board x: pair must name model_a and model_b"):
        Board.from_queryset(Vote.objects.all(), name="x", title="X",
                            pair={"a": "model_a_id", "b": "model_b_id"})


def test_a_board_naming_a_missing_field_fails_when_built_not_at_its_first_run():
    with pytest.raises(ValueError, match="board x: Cannot resolve keyword 'model_c_id'"):
        Board.from_queryset(Vote.objects.all(), name="x", title="X",
                            pair={"model_a": "model_a_id", "model_b": "model_c_id"})
    with pytest.raises(ValueError, match="board x: Cannot resolve keyword 'judge'"):
        Board.from_queryset(Vote.objects.all(), name="x", title="X", export={"judge": "judge"})


@pytest.mark.django_db
def test_a_queryset_board_reads_its_outcomes_every_way():
    votes = make_votes([("alpha", "beta", "model_a", 3), ("beta", "gamma", "tie", 1)])
    make_votes([("alpha", "gamma", "model_b", 2)], counts_for_rating=False)
    board = Board.from_queryset(
        Vote.objects.filter(counts_for_rating=True), name="x", title="X",
        contests=Battle.objects.all(), export={"battle_id": "battle_id"},
        uncounted=lambda: Vote.objects.filter(counts_for_rating=False))

    assert sorted(board.outcomes()) == [("alpha", "beta", "model_a", 3),
                                        ("beta", "gamma", "tie", 1)]
    assert list(board.subject_outcomes("gamma")) == [("beta", "gamma", "tie", 1)]
    ordered = list(board.ordered_outcomes())
    assert sorted(row[:3] for row in ordered) == [("alpha", "beta", "model_a")] * 3 + [
        ("beta", "gamma", "tie")]
    assert [row[3] for row in ordered] == sorted(row[3] for row in ordered)
    assert sorted(row[1:] for row in board.period_outcomes()) == [
        ("alpha", "beta", "model_a", 3), ("beta", "gamma", "tie", 1)]
    exported = list(board.export_rows())
    assert list(exported[0]) == ["model_a", "model_b", "winner", "battle_id", "created_at"]
    assert sorted(row["battle_id"] for row in exported) == sorted(str(v.battle_id)
                                                                   for v in votes)
    assert board.counts() == {"battles": 6, "votes_excluded": 2}
    assert board.vote_scan is None and board.subjects is None

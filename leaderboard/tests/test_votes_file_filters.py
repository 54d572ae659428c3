"""read_votes' filters for an open data release, which holds every board's votes: ``board``
keeps one board's rows, ``until`` the rows cast before a time (a rating run's start)."""

from datetime import UTC, datetime

import pytest

from leaderboard.ratings import VotesFileError, read_votes

ROWS = [("a", "b", "model_a", "text", "2026-11-26T10:00:00.000000Z"),
        ("a", "b", "model_b", "agent", "2026-11-26T10:00:00.000000Z"),
        ("b", "c", "tie", "text", "2026-11-26T12:00:00.000000Z")]


def write(path, rows):
    path.write_text("model_a,model_b,winner,board,timestamp\n"
                    + "".join(",".join(row) + "\n" for row in rows))
    return path


def test_board_keeps_only_that_boards_rows(tmp_path):
    votes = read_votes(write(tmp_path / "v.csv", ROWS), board="text")
    assert votes.a_idx.size == 2 and votes.models == ["a", "b", "c"]


def test_until_keeps_the_rows_cast_before_it(tmp_path):
    noon = datetime(2026, 11, 26, 12, tzinfo=UTC)
    votes = read_votes(write(tmp_path / "v.csv", ROWS), board="text", until=noon)
    assert votes.a_idx.size == 1 and votes.models == ["a", "b"]


def test_a_timestamp_that_is_no_time_names_its_row(tmp_path):
    path = write(tmp_path / "v.csv", [*ROWS[:2], ("a", "c", "tie", "text", "yesterday")])
    with pytest.raises(VotesFileError) as caught:
        read_votes(path, until=datetime(2027, 1, 1, tzinfo=UTC))
    assert str(caught.value) == ("v.csv: row 4: column 'timestamp' must be an ISO 8601 time "
                                 "with its offset, not 'yesterday'")


def test_a_file_without_a_board_column_says_so(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner\na,b,tie\n")
    with pytest.raises(VotesFileError, match="missing column 'board'"):
        read_votes(path, board="text")

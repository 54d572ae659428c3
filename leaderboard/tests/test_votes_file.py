"""The votes-file reader: parsing, one-line errors naming the row, grouping."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import pytest

from leaderboard.ratings.outcomes import A_WINS, B_WINS, BOTH_BAD, TIE
from leaderboard.ratings.votes_file import VotesFileError, group_outcomes, read_votes

DATA_FILE = "arena_human_preference_140k.csv.gz"


def shared_data_dir() -> Path:
    """``$ARENA_SHARED_DATA`` or ``shared/data`` beside the repository."""
    env = os.environ.get("ARENA_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared" / "data"


def real_votes_path() -> Path:
    path = shared_data_dir() / DATA_FILE
    if not path.is_file():
        pytest.skip(f"{path} is absent (set ARENA_SHARED_DATA to the shared data folder)")
    return path


def write(tmp_path: Path, text: str, name: str = "votes.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """model_a,model_b,winner,extra
beta,alpha,model_a,x
alpha,gamma,model_b,y
gamma,beta,tie,z
alpha,beta,both_bad,
beta,gamma,tie (bothbad),w
"""


def test_reads_plain_csv(tmp_path: Path) -> None:
    models, a, b, outcome = read_votes(write(tmp_path, GOOD))
    assert models == ["alpha", "beta", "gamma"]
    assert a.tolist() == [1, 0, 2, 0, 1]
    assert b.tolist() == [0, 2, 1, 1, 2]
    assert outcome.tolist() == [A_WINS, B_WINS, TIE, BOTH_BAD, BOTH_BAD]


def test_reads_gzip_whatever_the_name(tmp_path: Path) -> None:
    for name in ("votes.csv.gz", "votes.csv"):
        path = tmp_path / name
        path.write_bytes(gzip.compress(GOOD.encode()))
        votes = read_votes(path)
        assert votes.models == ["alpha", "beta", "gamma"]
        assert len(votes.a_idx) == 5


def test_columns_in_any_order_with_bom_and_crlf(tmp_path: Path) -> None:
    text = "\ufeffwinner,id,model_b,model_a\r\nmodel_b,1,y,x\r\ntie,2,x,y\r\n"
    votes = read_votes(write(tmp_path, text))
    assert votes.models == ["x", "y"]
    assert votes.a_idx.tolist() == [0, 1]
    assert votes.outcome.tolist() == [B_WINS, TIE]


def test_header_only_gives_empty_arrays(tmp_path: Path) -> None:
    votes = read_votes(write(tmp_path, "model_a,model_b,winner\n"))
    assert votes.models == [] and votes.a_idx.size == 0 and votes.outcome.size == 0


def test_blank_lines_are_skipped_but_counted(tmp_path: Path) -> None:
    text = "model_a,model_b,winner\nx,y,model_a\n\nx,y,oops\n"
    with pytest.raises(VotesFileError, match=r"row 4: unknown winner 'oops'"):
        read_votes(write(tmp_path, text))
    votes = read_votes(write(tmp_path, "model_a,model_b,winner\n\nx,y,model_a\n\n"))
    assert votes.a_idx.tolist() == [0]


def assert_one_line_error(path: Path, pattern: str, **kwargs: bool) -> str:
    with pytest.raises(VotesFileError, match=pattern) as info:
        read_votes(path, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path.name}: row ")
    return message


def test_missing_column(tmp_path: Path) -> None:
    path = write(tmp_path, "model_a,model_b,result\nx,y,model_a\n")
    assert_one_line_error(path, r"row 1: missing column 'winner' \(header has: ")


def test_empty_file(tmp_path: Path) -> None:
    assert_one_line_error(write(tmp_path, ""), r"row 1: empty file")


def test_unknown_winner(tmp_path: Path) -> None:
    text = "model_a,model_b,winner\nx,y,model_a\nx,y,draw\nx,y,also bad\n"
    assert_one_line_error(write(tmp_path, text), r"row 3: unknown winner 'draw' \(expected ")


def test_empty_model_name(tmp_path: Path) -> None:
    text = "model_a,model_b,winner\nx,y,tie\nx,y,tie\nx, ,model_a\n"
    assert_one_line_error(write(tmp_path, text), r"row 4: empty model name in column 'model_b'")
    text = "model_a,model_b,winner\n,y,tie\n"
    assert_one_line_error(write(tmp_path, text), r"row 2: empty model name in column 'model_a'")


def test_same_model_on_both_sides(tmp_path: Path) -> None:
    text = "model_a,model_b,winner\nx,x,tie\ny,x,model_a\n"
    path = write(tmp_path, text)
    assert_one_line_error(path, r"row 2: model_a and model_b are the same model \('x'\)")
    votes = read_votes(path, skip_self_matches=True)
    assert votes.a_idx.tolist() == [1] and votes.b_idx.tolist() == [0]


def test_short_row(tmp_path: Path) -> None:
    text = "model_a,model_b,winner\nx,y,tie\nx,y\n"
    assert_one_line_error(write(tmp_path, text), r"row 3: missing value for column 'winner'")


def test_earliest_problem_is_reported(tmp_path: Path) -> None:
    text = "model_a,model_b,winner\nx,y,tie\nx,x,tie\nx,y,nope\n"
    assert_one_line_error(write(tmp_path, text), r"row 3: model_a and model_b")


def test_not_csv_nor_gzip(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv.gz"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary")
    assert_one_line_error(path, r"row 1: not a CSV or gzip file")


def test_corrupt_and_truncated_gzip(tmp_path: Path) -> None:
    data = gzip.compress((GOOD * 200).encode())
    path = tmp_path / "votes.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    assert_one_line_error(path, r"row \d+: truncated gzip file")
    path.write_bytes(data[:10] + b"\x00" * 40 + data[50:])
    assert_one_line_error(path, r"row \d+: not a valid gzip file")


def test_binary_inside_gzip(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv.gz"
    path.write_bytes(gzip.compress(b"model_a,model_b,winner\nx,y,tie\n\xff\xfe\n"))
    assert_one_line_error(path, r"row 3: not a CSV file")


def test_csv_level_error(tmp_path: Path) -> None:
    huge = "x" * 200_000  # beyond the csv module's field size limit
    path = write(tmp_path, f"model_a,model_b,winner\nx,y,tie\nx,{huge},tie\n")
    assert_one_line_error(path, r"row 3: not a valid CSV file \(field larger than field limit")


def test_group_outcomes() -> None:
    a = np.array([0, 0, 1, 0, 0, 2])
    b = np.array([1, 1, 0, 1, 1, 0])
    o = np.array([A_WINS, A_WINS, A_WINS, TIE, A_WINS, BOTH_BAD])
    ga, gb, go, count = group_outcomes(a, b, o)
    rows = list(zip(ga.tolist(), gb.tolist(), go.tolist(), count.tolist(), strict=True))
    assert rows == [(0, 1, A_WINS, 3), (0, 1, TIE, 1), (1, 0, A_WINS, 1), (2, 0, BOTH_BAD, 1)]
    empty = group_outcomes(np.zeros(0), np.zeros(0), np.zeros(0))
    assert all(x.size == 0 for x in empty)
    with pytest.raises(ValueError, match="outcome codes"):
        group_outcomes(a, b, o + 4)


def test_real_file() -> None:
    path = real_votes_path()
    message = assert_one_line_error(path, r"row 3937: model_a and model_b are the same model")
    assert "gemini-2.5-flash-preview-04-17" in message
    votes = read_votes(path, skip_self_matches=True)
    assert len(votes.models) == 53
    # README counts less the 10 self-matches (4 model_a, 3 model_b, 3 tie).
    assert np.bincount(votes.outcome).tolist() == [48_559, 49_782, 21_529, 15_754]
    assert len(votes.a_idx) == 135_624
    assert votes.models == sorted(votes.models)
    assert np.all(votes.a_idx != votes.b_idx)


CATEGORIES = """model_a,model_b,winner,math
alpha,beta,model_a,True
beta,gamma,model_b,False
gamma,alpha,tie,1

alpha,gamma,model_b,
"""


def test_a_category_keeps_only_its_rows(tmp_path: Path) -> None:
    votes = read_votes(write(tmp_path, CATEGORIES), category="math")
    assert votes.models == ["alpha", "beta", "gamma"]
    assert list(zip(votes.a_idx, votes.b_idx, votes.outcome, strict=True)) == [
        (0, 1, A_WINS), (2, 0, TIE)]


def test_a_category_must_be_a_column_of_true_or_false(tmp_path: Path) -> None:
    with pytest.raises(VotesFileError, match=r"row 1: no category column 'coding'"):
        read_votes(write(tmp_path, CATEGORIES), category="coding")
    bad = CATEGORIES.replace("False", "maybe")
    with pytest.raises(VotesFileError, match=r"row 3: column 'math' must be true or false"):
        read_votes(write(tmp_path, bad), category="math")


def test_a_category_of_the_real_file_is_its_subset(tmp_path: Path) -> None:
    """The math board is the fit of exactly the rows tagged math, read independently."""
    import csv

    path = real_votes_path()
    votes = read_votes(path, skip_self_matches=True, category="math")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle)
                if r["math"] == "True" and r["model_a"] != r["model_b"]]
    assert len(votes.a_idx) == len(rows) == 10_892
    names = sorted({r["model_a"] for r in rows} | {r["model_b"] for r in rows})
    assert votes.models == names
    first = rows[0]
    assert (votes.models[votes.a_idx[0]], votes.models[votes.b_idx[0]]) == (
        first["model_a"], first["model_b"])


def test_style_columns_are_counts(tmp_path: Path) -> None:
    from leaderboard.ratings.votes_file import STYLE_COLUMNS, read_styled_votes

    header = "model_a,model_b,winner," + ",".join(STYLE_COLUMNS)
    good = f"{header}\nalpha,beta,model_a,10,20,0,1,2,0,0,0\nbeta,alpha,tie,5,,0,0,0,0,0,1\n"
    votes, style = read_styled_votes(write(tmp_path, good))
    assert votes.models == ["alpha", "beta"]
    assert style.a.tolist() == [[10, 0, 2, 0], [5, 0, 0, 0]]
    assert style.b.tolist() == [[20, 1, 0, 0], [0, 0, 0, 1]]  # an empty count is 0
    bad = good.replace(",5,,", ",5,lots,")
    with pytest.raises(VotesFileError, match=r"row 3: column 'tokens_b' must be a count"):
        read_styled_votes(write(tmp_path, bad))

"""rate, export_votes and recompute_ratings through call_command."""

import csv
import gzip
import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from leaderboard.models import BoardSnapshot, RatingRun
from leaderboard.ratings import fit_bradley_terry

from .factories import make_votes

VOTES = [
    ("alpha", "beta", "model_a"), ("alpha", "beta", "model_a"), ("beta", "alpha", "model_b"),
    ("alpha", "beta", "tie"), ("beta", "gamma", "model_a"), ("gamma", "beta", "both_bad"),
    ("gamma", "alpha", "model_b"), ("alpha", "gamma", "tie"), ("beta", "gamma", "model_b"),
    ("gamma", "beta", "model_b"), ("beta", "alpha", "model_a"),
]


def write_csv(path, rows, header=("model_a", "model_b", "winner")):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def rate(*args) -> str:
    out = io.StringIO()
    call_command("rate", *args, stdout=out)
    return out.getvalue()


def test_rate_prints_json_best_first_with_the_engine_numbers(tmp_path):
    path = write_csv(tmp_path / "votes.csv", VOTES)
    rows = json.loads(rate("--input", str(path), "--format", "json", "--ci", "sandwich"))
    assert [set(r) for r in rows] == [{"model", "rating", "ci_lower", "ci_upper", "votes",
                                       "rank_ub"}] * 3
    models = ["alpha", "beta", "gamma"]
    code = {"model_a": 0, "model_b": 1, "tie": 2, "both_bad": 3}
    expected = fit_bradley_terry(
        np.array([models.index(a) for a, _b, _w in VOTES]),
        np.array([models.index(b) for _a, b, _w in VOTES]),
        np.array([code[w] for *_x, w in VOTES]), np.ones(len(VOTES)), 3)
    by_model = {r["model"]: r for r in rows}
    for i, m in enumerate(models):
        assert by_model[m]["rating"] == pytest.approx(expected[i], abs=0.01)
    assert [r["rating"] for r in rows] == sorted((r["rating"] for r in rows), reverse=True)
    assert by_model["alpha"]["votes"] == 7
    assert all(r["ci_lower"] <= r["rating"] <= r["ci_upper"] for r in rows)
    assert rows[0]["rank_ub"] == 1


def test_rate_reads_gzip_and_every_method_and_format(tmp_path):
    plain = write_csv(tmp_path / "votes.csv", VOTES * 3)
    gz = tmp_path / "votes.csv.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    table = rate("--input", str(gz), "--bootstrap", "20")
    assert "Rank (UB)" in table and "alpha" in table and "bootstrap, 20 rounds" in table
    for method in ("elo", "glicko2"):
        out = rate("--input", str(gz), "--method", method, "--bootstrap", "5", "--format", "csv")
        header, *lines = out.strip().splitlines()
        assert header == "model,rating,ci_lower,ci_upper,votes,rank_ub" and len(lines) == 3


def test_a_malformed_file_gives_one_line_naming_the_row(tmp_path):
    path = write_csv(tmp_path / "bad.csv", [("alpha", "beta", "model_a"),
                                            ("alpha", "beta", "maybe")])
    with pytest.raises(CommandError) as err:
        rate("--input", str(path))
    message = str(err.value)
    assert "\n" not in message
    assert "row 3" in message and "maybe" in message and "bad.csv" in message


def test_a_file_without_the_winner_column(tmp_path):
    path = write_csv(tmp_path / "cols.csv", [("alpha", "beta")], header=("model_a", "model_b"))
    with pytest.raises(CommandError, match=r"row 1: missing column 'winner'"):
        rate("--input", str(path))


def test_sandwich_is_for_bradley_terry_only(tmp_path):
    path = write_csv(tmp_path / "votes.csv", VOTES)
    with pytest.raises(CommandError, match="sandwich"):
        rate("--input", str(path), "--method", "elo", "--ci", "sandwich")


@pytest.mark.django_db
def test_export_votes_round_trips_through_rate(tmp_path):
    make_votes([(a, b, w, 1) for a, b, w in VOTES])
    make_votes([("gamma", "alpha", "model_a", 4)], is_demo=True)
    make_votes([("alpha", "gamma", "model_a", 9)], counts_for_rating=False)  # not exported
    out = tmp_path / "export.csv"
    call_command("export_votes", "--output", str(out), stderr=io.StringIO())
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == len(VOTES) + 4
    assert list(rows[0])[:3] == ["model_a", "model_b", "winner"]
    assert {"vote_id", "battle_id", "created_at", "is_demo"} <= set(rows[0])
    assert sum(r["is_demo"] == "True" for r in rows) == 4

    call_command("recompute_ratings", stdout=io.StringIO())
    board = {e.subject: e for e in BoardSnapshot.objects.get().entries.all()}
    rated = {r["model"]: r for r in json.loads(
        rate("--input", str(out), "--format", "json", "--ci", "sandwich"))}
    assert set(rated) == set(board)
    for subject, entry in board.items():
        assert rated[subject]["rating"] == pytest.approx(entry.rating, abs=0.01)
        assert rated[subject]["ci_upper"] == pytest.approx(entry.ci_upper, abs=0.01)
        assert rated[subject]["votes"] == entry.votes


@pytest.mark.django_db
def test_export_votes_as_json_lines(tmp_path):
    make_votes([("alpha", "beta", "both_bad", 2)])
    buffer = io.StringIO()
    call_command("export_votes", "--format", "jsonl", stdout=buffer)
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert len(lines) == 2 and lines[0]["winner"] == "both_bad" and lines[0]["is_demo"] is False


@pytest.mark.django_db
def test_recompute_ratings_one_board_with_bootstrap():
    make_votes([("alpha", "beta", "model_a", 6), ("beta", "alpha", "tie", 3)])
    out = io.StringIO()
    call_command("recompute_ratings", "--board", "text", "--bootstrap", "10", stdout=out)
    snap = BoardSnapshot.objects.get()
    assert (snap.ci_method, snap.bootstrap_rounds, snap.outcomes) == ("bootstrap", 10, 9)
    assert RatingRun.objects.get().trigger == "command"
    assert "text: 9 outcomes" in out.getvalue()


@pytest.mark.django_db
def test_recompute_ratings_rejects_an_unknown_board():
    with pytest.raises(CommandError, match="Unknown board 'nope'"):
        call_command("recompute_ratings", "--board", "nope", stdout=io.StringIO())


def test_rate_a_category_fits_only_its_votes(tmp_path):
    rows = [(*v, "True" if i % 2 else "False") for i, v in enumerate(VOTES)]
    path = write_csv(tmp_path / "votes.csv", rows, header=("model_a", "model_b", "winner",
                                                           "math"))
    subset = write_csv(tmp_path / "subset.csv", [r[:3] for r in rows if r[3] == "True"])
    by_category = json.loads(rate("--input", str(path), "--category", "math", "--ci",
                                  "sandwich", "--format", "json"))
    by_subset = json.loads(rate("--input", str(subset), "--ci", "sandwich", "--format", "json"))
    assert by_category == by_subset
    assert sum(r["votes"] for r in by_category) == 2 * len(VOTES[1::2])
    table = rate("--input", str(path), "--category", "math", "--ci", "sandwich")
    assert "in category math" in table.splitlines()[0]
    with pytest.raises(CommandError, match="no category column 'coding'"):
        rate("--input", str(path), "--category", "coding")


def test_rate_with_style_control_on_a_file_with_style_columns(tmp_path):
    from leaderboard.ratings.style_control import fit_style_controlled, style_features
    from leaderboard.ratings.votes_file import STYLE_COLUMNS
    from leaderboard.tests.test_ratings_style_control import LENGTH_BIAS, _simulate

    true, a, b, code, _ = _simulate(2, LENGTH_BIAS)
    rng = np.random.default_rng(2)
    names = [f"m{i}" for i in range(true.size)]
    winners = np.array(["model_a", "model_b", "tie", "both_bad"])[code]
    tokens = rng.integers(50, 900, size=(a.size, 2))
    rows = [(names[x], names[y], w, t_a, t_b, 0, 0, 1, 0, 2, 2)
            for x, y, w, (t_a, t_b) in zip(a, b, winners, tokens, strict=True)]
    path = write_csv(tmp_path / "styled.csv", rows,
                     header=("model_a", "model_b", "winner", *STYLE_COLUMNS))
    out = json.loads(rate("--input", str(path), "--style-control", "--format", "json"))
    x = style_features(np.column_stack([tokens[:, 0], np.zeros(a.size), np.ones(a.size),
                                        np.full(a.size, 2)]),
                       np.column_stack([tokens[:, 1], np.zeros(a.size), np.zeros(a.size),
                                        np.full(a.size, 2)]))
    direct = fit_style_controlled(a, b, code, x, true.size)
    by_model = {r["model"]: r["rating"] for r in out["ratings"]}
    assert [by_model[n] for n in names] == pytest.approx(direct.ratings, abs=0.01)
    assert set(out["style_coefficients"]) == {"tokens", "headers", "lists", "bold"}
    # Random lengths that did not sway the (simulated) voters: no length effect found.
    tokens_effect = out["style_coefficients"]["tokens"]
    assert tokens_effect["ci_lower"] < 0 < tokens_effect["ci_upper"]
    table = rate("--input", str(path), "--style-control")
    assert "style-controlled" in table.splitlines()[0] and "tokens" in table.splitlines()[1]
    plain = write_csv(tmp_path / "plain.csv", VOTES)
    with pytest.raises(CommandError, match="no style column 'tokens_a'"):
        rate("--input", str(plain), "--style-control")
    with pytest.raises(CommandError, match="applies to --method bt only"):
        rate("--input", str(path), "--style-control", "--method", "elo")


def test_the_rate_command_loads_no_provider_sdk():
    """``rate`` is meant to start fast (issue 13: under 0.3 x arena-rank): the app registry
    it loads must not pull the model providers' SDKs in, which take over a second."""
    import subprocess
    import sys

    code = ("import django, os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
            "'arena.settings'); django.setup(); "
            "from leaderboard.management.commands import rate; "
            "bad = sorted(m for m in ('openai', 'anthropic', 'py3langid') "
            "if m in sys.modules); print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr

"""A board's rating run is reproduced exactly by ``manage.py rate`` from a release file, with
the options the leaderboard shows beside the board."""

from __future__ import annotations

import io
import json

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from leaderboard.management.commands.rate import BAD_UNTIL
from leaderboard.models import BoardSnapshot, RunTrigger
from leaderboard.runs.services import ratings_run
from leaderboard.tests.factories import make_votes
from releases.selectors import release_dir
from releases.services import CSV, release_build

pytestmark = pytest.mark.django_db

VOTES = [("alpha", "beta", "model_a", 6), ("beta", "alpha", "model_a", 3),
         ("alpha", "gamma", "tie", 4), ("gamma", "beta", "model_b", 5),
         ("beta", "gamma", "both_bad", 2), ("alpha", "delta", "model_a", 2)]


def rate(*args) -> list[dict]:
    out = io.StringIO()
    call_command("rate", *args, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def test_rate_on_a_release_reproduces_the_text_board_of_the_run():
    make_votes(VOTES)
    make_votes([("alpha", "beta", "model_b", 7)], counts_for_rating=False)  # not published
    run = ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    make_votes([("gamma", "alpha", "model_a", 9)])  # after the run: in the release, not the run
    release, _ = release_build()
    snapshot = BoardSnapshot.objects.get(board="text", category="", run=run)
    assert release.votes == snapshot.outcomes + 9

    rated = {r["model"]: r for r in rate(
        "--input", str(release_dir(release.date) / CSV), "--board", "text",
        "--until", run.started_at.isoformat(), "--ci", settings.ARENA_LEADERBOARD_CI,
        "--min-votes", str(snapshot.min_votes))}
    entries = {e.subject: e for e in snapshot.entries.all()}
    assert set(rated) == set(entries) == {"alpha", "beta", "gamma", "delta"}
    assert entries["delta"].provisional  # 2 votes: held at its estimate, in both
    for subject, entry in entries.items():  # the same figures, as `rate` prints them (0.01)
        assert rated[subject]["votes"] == entry.votes
        assert rated[subject]["rating"] == round(entry.rating, 2)
        assert rated[subject]["ci_lower"] == round(entry.ci_lower, 2)
        assert rated[subject]["ci_upper"] == round(entry.ci_upper, 2)


def test_rate_refuses_an_until_without_its_offset(tmp_path):
    make_votes(VOTES)
    release, _ = release_build()
    with pytest.raises(CommandError) as caught:
        rate("--input", str(release_dir(release.date) / CSV), "--until", "2026-01-01T00:00")
    assert str(caught.value) == BAD_UNTIL.format(value="2026-01-01T00:00")

"""Crowd calibration (seed 004: the crowd picks the stronger side > 70 %): debates with a
known quality gap listed for the crowd, its votes cast through the real vote service, the
report and the command, with enough votes and with too few."""

import json
import random
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from arena.contests.proportions import wilson_interval
from debates import crowd
from debates.crowd_calibration import (
    FAILED,
    PASSED,
    TOO_FEW,
    crowd_calibration_report,
    crowd_calibration_start,
)
from debates.management.commands.crowd_calibrate import BAD_WINDOW, NO_DEBATES
from debates.models import CrowdVote, Debate, DebateStatus, DebateTurn
from debates.tests.debate_support import debate_row, library
from testkit.registry import make_model

pytestmark = pytest.mark.django_db


@pytest.fixture
def gap():
    """Four completed crowd calibration debates whose con side was handicapped (pro is
    the stronger), each with its two speeches."""
    template = debate_row()
    debates = []
    for _ in range(4):
        debate = Debate.objects.create(
            topic=template.topic, model_a=template.model_a, model_b=template.model_b,
            persona_a=template.persona_a, persona_b=template.persona_b,
            model_a_position="pro", status=DebateStatus.COMPLETED, is_listed=True,
            handicapped="con", handicap="fallacious")
        for position, model in (("pro", template.model_a), ("con", template.model_b)):
            DebateTurn.objects.create(debate=debate, round=1, position=position,
                                      speaker=model, speech="A speech.")
        debates.append(debate)
    return debates


def cast(debates, choices: list[str]) -> None:
    """One vote per visitor, through the real vote service, spread over the debates."""
    for i, choice in enumerate(choices):
        crowd.debate_vote(debate_id=debates[i % len(debates)].pk, session_key=f"crowd-{i:03d}",
                          choice=choice)


def report(min_votes=40):
    return crowd_calibration_report(since=timezone.now() - timedelta(days=1),
                                    min_votes=min_votes)


def test_enough_votes_for_the_stronger_side_pass(gap, capsys):
    cast(gap, ["pro"] * 36 + ["con"] * 3 + ["tie"])  # a tie is a miss
    result = report()
    assert (result.votes, result.hits, result.debates, result.voted) == (40, 36, 4, 4)
    assert result.interval == wilson_interval(36, 40) and result.interval[0] > 0.70
    assert result.verdict == "pass" and result.votes_needed == 0
    assert result.by_handicap == {"fallacious": (40, 36)}
    call_command("crowd_calibrate", "--report", "--min-votes", "40", "--window-days", "1")
    out = capsys.readouterr().out
    assert "Votes for the stronger side: 36/40 = 90% (95% CI 77%-96%; target > 70%)" in out
    assert PASSED.format(target=0.70) in out


def test_too_few_votes_say_how_many_more_are_needed(gap, capsys):
    cast(gap, ["pro"] * 8 + ["con"] * 2)
    result = report(min_votes=50)
    assert result.verdict == "too_few" and result.votes_needed == 40
    call_command("crowd_calibrate", "--report", "--json")  # the default: 50 votes
    data = json.loads(capsys.readouterr().out)
    assert (data["votes"], data["hits"], data["verdict"], data["votes_needed"]) == (
        10, 8, "too_few", 40)
    assert data["message"] == TOO_FEW.format(votes=10, least=50, more=40)


def test_a_crowd_that_cannot_tell_the_sides_apart_fails(gap):
    cast(gap, ["pro", "con"] * 20)
    result = report()
    assert result.interval[1] < 0.70
    assert result.verdict == "fail" and result.message == FAILED.format(target=0.70)


def test_an_unsettled_share_says_how_many_votes_would_settle_it(gap):
    cast(gap, ["pro"] * 36 + ["con"] * 14)  # 72 %: the interval straddles 70 %
    result = report(min_votes=50)
    assert result.verdict == "inconclusive"
    assert result.votes_needed == 1937 - 50  # ⌈1.96² · 0.72 · 0.28 / 0.02²⌉ = 1937 in all


def test_only_counted_votes_on_recent_listed_calibration_debates_count(gap):
    cast(gap, ["pro"] * 3)
    crowd.crowd_reveal(debate_id=gap[0].pk, session_key="peeker")  # a reveal is no vote
    CrowdVote.objects.filter(session_key="crowd-002").update(counts_for_rating=False)
    judge_only = gap[1]
    judge_only.pk = None
    judge_only.is_listed = False  # debate_calibrate's own: the crowd never saw it
    judge_only.save()
    Debate.objects.filter(pk=gap[3].pk).update(created_at=timezone.now() - timedelta(days=3))
    crowd.debate_vote(debate_id=gap[3].pk, session_key="late", choice="pro")
    result = report()
    assert (result.votes, result.hits, result.debates) == (2, 2, 3)


def test_the_command_starts_listed_debates_with_a_known_gap(fake_openai, settings, capsys):
    for slug in ("alpha-7b", "beta-3b", "gamma-1b"):
        make_model(fake_openai, slug)
    settings.ARENA_DEBATE_JUDGE_MODEL = "gamma-1b"
    library()
    started = crowd_calibration_start(count=3, models=["alpha-7b", "beta-3b"],
                                      rng=random.Random(3))
    assert all(d.is_listed and d.handicapped in ("pro", "con") for d in started)
    assert sorted(d.handicap for d in started) == ["fallacious", "false_claims", "off_topic"]
    call_command("crowd_calibrate", "--debates", "2", "--models", "alpha-7b", "beta-3b",
                 "--worker", "external", "--timeout", "0")
    out = capsys.readouterr().out
    assert "Started 2 debates with a known quality gap, listed for the crowd" in out
    assert "50 more" in out  # nothing voted yet
    assert Debate.objects.filter(is_listed=True).exclude(handicapped="").count() == 5


def test_the_command_refuses_a_window_or_count_that_means_nothing():
    for args, message in ((["--debates", "0"], NO_DEBATES),
                          (["--report", "--window-days", "0"], BAD_WINDOW),
                          (["--report", "--min-votes", "0"], BAD_WINDOW)):
        with pytest.raises(CommandError) as refused:
            call_command("crowd_calibrate", *args)
        assert str(refused.value) == message

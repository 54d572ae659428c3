"""Calibration debates: a known quality gap, the judge's agreement and consistency, the
fact-checker's catch rate of planted false claims."""

import random

import pytest
from django.core.management import call_command

from debates.calibration import calibration_report, calibration_start
from debates.models import Debate, DebateStatus
from debates.tests.debate_support import (
    DebateScript,
    make_model,
    quiet_rating_runs,
    wait_debate,
    wait_for,
    worker_idle,
)
from debates.topics import library_load, planted_claims


@pytest.fixture
def calibration_setup(celery_worker, fake_openai, settings, monkeypatch):
    quiet_rating_runs(monkeypatch)
    library_load()  # the seeded library and the planted claims' refutations
    script = DebateScript(verdicts=dict.fromkeys(planted_claims(), "false"))
    fake_openai.reply_text = script
    for slug in ("alpha-7b", "beta-3b", "gamma-1b"):
        make_model(fake_openai, slug)
    settings.ARENA_DEBATE_JUDGE_MODEL = "gamma-1b"
    yield script
    wait_for(worker_idle)


def test_the_report_measures_agreement_consistency_and_catches(calibration_setup):
    debates = calibration_start(count=3, models=["alpha-7b", "beta-3b"], rounds=1,
                                rng=random.Random(7))
    assert sorted(d.handicap for d in debates) == ["fallacious", "false_claims", "off_topic"]
    assert all(not d.is_listed and d.handicapped in ("pro", "con") for d in debates)
    for debate in debates:
        wait_debate(debate.pk)
    report = calibration_report([d.pk for d in debates])
    # The fake judge always says pro: it agrees exactly where the weak side was con.
    weak_con = sum(Debate.objects.get(pk=d.pk).handicapped == "con" for d in debates)
    assert (report.finished, report.judged, report.agreed) == (3, 3, weak_con)
    assert report.pairs == 3 and report.consistency == 1.0
    planted = next(d for d in debates if d.handicap == "false_claims")
    assert report.planted == len(Debate.objects.get(pk=planted.pk).planted) == 1
    assert (report.planted_spoken, report.caught, report.catch_rate) == (1, 1, 1.0)
    # Calibration debates count on no board.
    from debates.boards import DEBATE_AI_BOARD

    assert list(DEBATE_AI_BOARD.outcomes()) == []


def test_the_command_runs_and_prints_the_figures(calibration_setup, capsys):
    call_command("debate_calibrate", "--debates", "2", "--models", "alpha-7b", "beta-3b",
                 "--worker", "external")
    out = capsys.readouterr().out
    assert "Debates finished: 2/2" in out
    assert "Judge agreement with the expected winner:" in out
    assert "Position consistency (same winner in both orders): 100% (2/2)" in out
    assert Debate.objects.filter(status=DebateStatus.COMPLETED).count() == 2

"""The two Glicko-2 debate boards, the controversy index and the leaderboard's debates
section."""

import math
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from debates.boards import DEBATE_AI_BOARD, DEBATE_CROWD_BOARD
from debates.models import Debate, DebateStatus, DebateTurn
from debates.standings import controversy_index, debate_standings
from debates.tests.debate_support import debate_row
from leaderboard.models import RunTrigger
from leaderboard.ratings.glicko2 import rate_period_arrays
from leaderboard.runs.services import ratings_run


def test_both_boards_are_glicko2_with_a_section():
    for board in (DEBATE_CROWD_BOARD, DEBATE_AI_BOARD):
        assert board.primary_method == "glicko2" and board.period_outcomes is not None
        assert board.section == "debates.standings.debate_section"


def test_the_controversy_index():
    assert controversy_index(1600, 30, 1500, 40) == pytest.approx(2.0)
    assert controversy_index(1500, 100, 1500, 50) == 0.0


def _completed(template, *, ai: str, crowd: str, days_ago: int = 0):
    from debates.models import Debate

    debate = Debate.objects.create(
        topic=template.topic, model_a=template.model_a, model_b=template.model_b,
        persona_a=template.persona_a, persona_b=template.persona_b, model_a_position="pro",
        status=DebateStatus.COMPLETED, ai_winner=ai, human_winner=crowd,
        created_at=timezone.now() - timedelta(days=days_ago))
    debate.ai_outcome, debate.crowd_outcome = debate.outcome_of(ai), debate.outcome_of(crowd)
    debate.save()
    return debate


@pytest.mark.django_db
def test_each_board_rates_its_own_verdicts_over_daily_periods():
    template = debate_row()
    for days in (3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0):
        _completed(template, ai="pro", crowd="con", days_ago=days)
    assert sorted(DEBATE_AI_BOARD.outcomes()) == [("row-a", "row-b", "model_a", 12)]
    assert sorted(DEBATE_CROWD_BOARD.outcomes()) == [("row-a", "row-b", "model_b", 12)]
    assert [row[0] for row in DEBATE_AI_BOARD.period_outcomes()] == sorted(
        {row[0] for row in DEBATE_AI_BOARD.period_outcomes()})
    assert len(list(DEBATE_AI_BOARD.period_outcomes())) == 4  # four days
    exported = list(DEBATE_CROWD_BOARD.export_rows())
    assert len(exported) == 12 and exported[0]["winner"] == "model_b"
    assert exported[0]["debate_id"] == str(Debate.objects.order_by("created_at").first().pk)
    run = ratings_run(trigger=RunTrigger.COMMAND, boards=["debate-ai", "debate-crowd"])
    ai = dict(run.snapshots.get(board="debate-ai").entries.values_list("subject", "rating"))
    crowd = dict(run.snapshots.get(board="debate-crowd").entries.values_list("subject",
                                                                            "rating"))
    assert run.snapshots.get(board="debate-ai").method == "glicko2"
    assert ai["row-a"] > 1500 > ai["row-b"] and crowd["row-b"] > 1500 > crowd["row-a"]
    # The same numbers as the leaderboard's exact Glicko-2, period by period.
    import numpy as np

    rating, rd, vol = np.full(2, 1500.0), np.full(2, 350.0), np.full(2, 0.06)
    for games in (3, 3, 3, 3):
        player, opponent = np.zeros(games, dtype=int), np.ones(games, dtype=int)
        score = np.ones(games)  # each game once, from its first player's side
        rating, rd, vol = rate_period_arrays(rating, rd, vol, player, opponent, score)
    assert ai["row-a"] == pytest.approx(rating[0], abs=1e-6)
    standings = {s.subject: s for s in debate_standings()}
    a = standings["row-a"]
    assert a.debates == 12 and a.win_rate == 1.0
    assert a.controversy == pytest.approx(controversy_index(
        a.crowd_rating, a.crowd_rd, a.ai_rating, a.ai_rd))
    assert a.controversy < -2 and a.flagged
    assert not math.isnan(a.crowd_rd)
    page = Client().get("/leaderboard/", {"board": "debate-ai"}).content.decode()
    assert 'data-testid="debate-standings"' in page
    assert 'data-testid="controversial-model"' in page


@pytest.mark.django_db
def test_a_crowd_result_does_not_count_when_a_debater_named_a_model():
    template = debate_row()
    named = _completed(template, ai="pro", crowd="pro")
    _completed(template, ai="con", crowd="con")
    DebateTurn.objects.create(debate=named, round=1, position="con", speaker=template.model_b,
                              speech="As row-b I say so.", names_model="row-b")
    assert sorted(DEBATE_CROWD_BOARD.outcomes()) == [("row-a", "row-b", "model_b", 1)]
    assert sum(n for *_, n in DEBATE_AI_BOARD.outcomes()) == 2


@pytest.mark.django_db
def test_a_rating_period_is_a_utc_day():
    from datetime import UTC, date, datetime

    template = debate_row()
    for moment in ("2026-01-01T23:59:59", "2026-01-02T00:00:01", "2026-01-02T23:59:59"):
        debate = _completed(template, ai="pro", crowd="pro")
        debate.created_at = datetime.fromisoformat(moment).replace(tzinfo=UTC)
        debate.save()
    day = (date(2026, 1, 1) - date(1970, 1, 1)).days
    rows = sorted(DEBATE_AI_BOARD.period_outcomes())
    assert [(r[0], r[-1]) for r in rows if r[0] in (day, day + 1)] == [(day, 1), (day + 1, 2)]

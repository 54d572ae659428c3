"""Seed 004's leaderboard figures: Glicko-2 volatility beside rating and RD, and the debate
boards' controversy index and average factuality in GET /api/leaderboard, sortable."""

import numpy as np
import pytest
from django.test import Client

from arena.models import AIModel, ProviderKind
from debates.models import Debate, DebateStatus, DebateTurn
from debates.standings import debate_standings
from debates.tests.debate_support import completed_debate, debate_row
from leaderboard.models import RunTrigger
from leaderboard.pages.selectors import BAD_SORT, NO_METRIC
from leaderboard.ratings.glicko2 import rate_period_arrays
from leaderboard.runs.services import ratings_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def rated(settings):
    """row-a beats row-b by the judge and loses by the crowd (controversial); row-c
    splits with row-b on both boards. Factuality: row-a 0.9, row-b 0.5, row-c 0.2."""
    settings.ARENA_LEADERBOARD_MIN_VOTES = 1  # every model ranked, in one sorted list
    template = debate_row()
    a, b = template.model_a, template.model_b
    c = AIModel.objects.create(slug="row-c", name="row-c", api_model="row-c", provider="P",
                               provider_kind=ProviderKind.OPENAI)
    for days in (3, 2, 1):
        completed_debate(template, a, b, ai="pro", crowd="con", days_ago=days,
                         factuality=(0.9, 0.5))
        completed_debate(template, b, c, ai="tie", crowd="tie", days_ago=days,
                         factuality=(0.5, 0.2))
    ratings_run(trigger=RunTrigger.COMMAND, boards=["debate-ai", "debate-crowd"])


def api(**params):
    response = Client().get("/api/leaderboard", {"board": "debate-ai", **params})
    return response.status_code, response.json()


def test_the_volatility_is_stored_and_answered_beside_rating_and_rd(rated):
    status, every = api(include_provisional="true")
    assert status == 200
    entries = {e["model_id"]: e for e in every["leaderboard"]}
    a = entries["row-a"]
    assert a["rating_deviation"] == pytest.approx(
        (a["ci_upper"] - a["rating"]) / 1.959963984540054)
    # The stored σ is the leaderboard's own Glicko-2's, period by period (one game per
    # pair and day on the AI board: a beats b, b ties c).
    rating, rd, vol = np.full(3, 1500.0), np.full(3, 350.0), np.full(3, 0.06)
    for _ in range(3):
        rating, rd, vol = rate_period_arrays(rating, rd, vol, np.array([0, 1]),
                                             np.array([1, 2]), np.array([1.0, 0.5]))
    assert a["volatility"] == pytest.approx(vol[0], abs=1e-9)
    assert a["volatility"] != 0.06  # it moved from the start value
    assert entries["row-c"]["volatility"] == pytest.approx(vol[2], abs=1e-9)


def test_a_text_board_has_no_volatility_or_debate_figures(rated):

    response = Client().get("/api/leaderboard", {"board": "text"})
    assert response.status_code == 200
    assert all(e["volatility"] is None and e["controversy_index"] is None
               for e in response.json()["leaderboard"])


def test_the_debate_figures_are_in_the_api_and_sort(rated):
    _status, data = api(include_provisional="true", sort="controversy")
    rows = {e["model_id"]: e for e in data["leaderboard"]}
    assert rows["row-a"]["avg_factuality"] == pytest.approx(0.9)
    assert rows["row-b"]["avg_factuality"] == pytest.approx(0.5)
    assert rows["row-c"]["avg_factuality"] == pytest.approx(0.2)
    assert rows["row-a"]["controversy_index"] < 0  # the crowd says it lost, the judge won
    indexes = [e["controversy_index"] for e in data["leaderboard"]]
    assert indexes == sorted(indexes, reverse=True)
    _status, by_facts = api(include_provisional="true", sort="factuality", order="asc")
    assert [e["model_id"] for e in by_facts["leaderboard"]] == ["row-c", "row-b", "row-a"]
    _status, by_facts = api(include_provisional="true", sort="factuality")
    assert [e["model_id"] for e in by_facts["leaderboard"]] == ["row-a", "row-b", "row-c"]


def factuality_of(model_id: str):
    _status, data = api(include_provisional="true")
    return {e["model_id"]: e["avg_factuality"] for e in data["leaderboard"]}[model_id]


def test_a_running_debates_speech_does_not_move_the_average_factuality(rated):
    # A viewer polling the API during a live debate must not see whose average moved.
    running = Debate.objects.get(status=DebateStatus.IN_PROGRESS)
    DebateTurn.objects.create(debate=running, round=1, position="con",
                              speaker=running.model_a, speech="A reply.", factuality=0.0)
    assert factuality_of("row-a") == pytest.approx(0.9)


def test_a_calibration_debate_is_not_counted(rated):
    template = Debate.objects.get(status=DebateStatus.IN_PROGRESS)
    a, b = template.model_a, template.model_b
    before = {s.subject: s.debates for s in debate_standings()}
    completed_debate(template, a, b, ai="con", crowd="con", factuality=(0.0, 0.0),
                     handicapped="pro", handicap="false_claims")
    assert factuality_of("row-a") == pytest.approx(0.9)
    assert factuality_of("row-b") == pytest.approx(0.5)
    after = {s.subject: (s.debates, s.win_rate) for s in debate_standings()}
    assert after["row-a"] == (before["row-a"], 1.0)  # not one more debate, not a loss
    assert after["row-b"][0] == before["row-b"]


def test_the_average_factuality_is_rounded(rated):
    template = Debate.objects.get(status=DebateStatus.IN_PROGRESS)
    c = AIModel.objects.get(slug="row-c")
    completed_debate(template, template.model_b, c, ai="tie", crowd="tie",
                     factuality=(0.0, 0.2))
    # row-b: six speeches at 0.5 and one at 0 -> 3/7, shown to three decimals
    assert factuality_of("row-b") == 0.429


def test_a_debate_sort_is_refused_where_it_means_nothing(rated):
    response = Client().get("/api/leaderboard", {"board": "text", "sort": "controversy"})
    assert response.status_code == 422
    assert response.json()["detail"].startswith(NO_METRIC.split("{")[0])
    assert "debate-ai" in response.json()["detail"]
    response = Client().get("/api/leaderboard", {"board": "debate-ai", "sort": "loudness"})
    assert response.status_code == 422
    assert response.json()["detail"] == BAD_SORT.format(value="loudness")


def test_the_board_page_shows_rd_volatility_and_the_figures(rated):
    page = Client().get("/leaderboard/", {"board": "debate-ai", "sort": "factuality"})
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-testid="glicko-header"' in html and 'data-testid="sort-controversy"' in html
    assert 'class="num nowrap lb-glicko"' in html and 'class="num lb-factuality">0.90<' in html
    assert 'data-testid="ai-volatility"' in html and 'data-testid="crowd-volatility"' in html


def test_a_models_page_shows_its_debate_volatility(rated):
    html = Client().get("/models/row-a/").content.decode()
    assert 'data-testid="volatility-debate-ai"' in html and "σ 0.0" in html
    boards = {s["board"]: s for s in Client().get("/api/models/row-a").json()["boards"]}
    assert boards["debate-ai"]["volatility"] == pytest.approx(0.06, abs=1e-3)

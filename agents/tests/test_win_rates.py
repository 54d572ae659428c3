"""Win rates per voice agent on each dimension of the vote, with n and a Wilson interval: in
the selector, the JSON API (``GET /agents/win-rates`` and a model's ``extras``), the voice
board's section and the page of the model an agent is built on."""

from __future__ import annotations

import pytest
from django.test import Client

from agents.models import AgentBattle, AgentConfiguration, AgentVote, Provider, Scenario
from agents.win_rates import DIMENSIONS, agent_win_rates, win_rate
from testkit.ratings import quiet_rating_runs
from testkit.registry import make_model

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(monkeypatch):
    from agents.library import library_load

    library_load()
    quiet_rating_runs(monkeypatch)
    AgentConfiguration.objects.update(active=False)
    return [AgentConfiguration.objects.create(
        slug=f"agent-{n}", name=f"Agent {n}", provider=Provider.ECHO,
        components_json={"llm": f"{n}-llm"}) for n in ("one", "two")]


def _voted(a, b, overall: str, counts: bool = True, **sub_votes: str) -> AgentVote:
    battle = AgentBattle.objects.create(session_key="s", scenario=Scenario.objects.first(),
                                        config_a=a, config_b=b, status="voted")
    return AgentVote.objects.create(battle=battle, session_key="s", overall=overall,
                                    sub_votes_json=sub_votes, counts_for_rating=counts)


def _rates(agent_id: str) -> dict:
    found = next(a for a in agent_win_rates() if a.agent_id == agent_id)
    return {r.dimension: r for r in found.rates}


def test_the_wilson_interval_is_honest_at_no_vote_and_one_vote():
    none = win_rate("speed", 0, 0, 0)
    assert (none.n, none.win_rate, none.ci_lower, none.ci_upper) == (0, None, None, None)
    one = win_rate("speed", 1, 0, 0)
    assert (one.n, one.win_rate, one.ci_lower, one.ci_upper) == (1, 1.0, 0.2065, 1.0)
    lost = win_rate("speed", 0, 0, 1)
    assert (lost.win_rate, lost.ci_lower, lost.ci_upper) == (0.0, 0.0, 0.7935)
    tie = win_rate("speed", 0, 1, 0)  # a tie is a vote not won
    assert (tie.wins, tie.ties, tie.n, tie.win_rate) == (0, 1, 1, 0.0)


def test_each_dimension_counts_the_votes_that_judged_it(pair):
    one, two = pair
    _voted(one, two, "a", speed="a", naturalness="b")
    _voted(two, one, "tie", speed="b", understanding="tie")  # one is side b here
    _voted(one, two, "b", speed="b", counts=False)  # does not count for ratings
    rates = _rates("agent-one")
    assert (rates["overall"].wins, rates["overall"].ties, rates["overall"].n) == (1, 1, 2)
    assert (rates["speed"].wins, rates["speed"].n, rates["speed"].win_rate) == (2, 2, 1.0)
    assert rates["speed"].ci_lower == pytest.approx(0.342, abs=1e-3)
    assert (rates["naturalness"].losses, rates["naturalness"].n) == (1, 1)
    assert (rates["understanding"].ties, rates["understanding"].win_rate) == (1, 0.0)
    assert rates["helpfulness"].n == 0 and rates["helpfulness"].win_rate is None
    other = _rates("agent-two")
    assert (other["speed"].losses, other["naturalness"].wins) == (2, 1)


def test_the_api_gives_every_agents_win_rates(pair):
    _voted(*pair, "a", helpfulness="a")
    data = Client().get("/agents/win-rates").json()
    assert data["dimensions"] == list(DIMENSIONS) and data["confidence"] == 0.95
    first = data["agents"][0]
    assert first["agent_id"] == "agent-one" and first["votes"] == 1
    assert first["win_rates"]["helpfulness"] == {
        "dimension": "helpfulness", "wins": 1, "ties": 0, "losses": 0, "n": 1,
        "win_rate": 1.0, "ci_lower": 0.2065, "ci_upper": 1.0}
    assert first["win_rates"]["speed"]["n"] == 0
    assert first["win_rates"]["speed"]["win_rate"] is None
    schema = Client().get("/voice-api/openapi.json").json()
    assert "/agents/win-rates" in schema["paths"]


def test_the_voice_board_shows_each_agents_win_rates(pair):
    _voted(*pair, "b", naturalness="b")
    html = Client().get("/leaderboard/?board=agent").content.decode()
    assert 'data-testid="voice-win-rates"' in html
    row = html[html.index('data-agent="agent-two"'):]
    row = row[:row.index("</tr>")]
    assert 'data-dimension="naturalness">100% <span class="muted small">n=1</span>' in row
    assert "21–100%" in row and "no votes" in row  # speed was not judged
    other = Client().get("/leaderboard/?board=agent-cascade").content.decode()
    assert 'data-testid="voice-win-rates"' not in other


def test_a_models_page_shows_the_voice_agents_built_on_it(pair, fake_openai):
    make_model(fake_openai, "one-llm")
    make_model(fake_openai, "plain-llm")
    _voted(*pair, "a", speed="a")
    html = Client().get("/models/one-llm/").content.decode()
    assert "Voice agents built on this model" in html and 'data-agent="agent-one"' in html
    assert 'data-agent="agent-two"' not in html  # built on another model
    data = Client().get("/api/models/one-llm").json()
    agents = data["extras"]["agent"]["agents"]
    assert [a["agent_id"] for a in agents] == ["agent-one"]
    assert agents[0]["win_rates"]["speed"]["wins"] == 1
    assert "Voice agents" not in Client().get("/models/plain-llm/").content.decode()
    assert Client().get("/api/models/plain-llm").json()["extras"] == {}

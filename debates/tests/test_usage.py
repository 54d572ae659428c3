"""Token usage per kind of debate (seed 004): the selector, GET /api/debates/usage, the
leaderboard's debates section and manage.py debate_usage."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from debates.models import Debate, DebateStatus, Topic
from debates.tests.debate_support import debate_row
from debates.usage import BAD_USAGE_BY, USAGE_MIN_DEBATES, debate_usage

pytestmark = pytest.mark.django_db


@pytest.fixture
def debates():
    """Six completed Environment debates (3 rounds: 1,000 tokens a side, 200 judging, $0.01
    each), two Economics ones (1 round), one calibration run and one still running."""
    template = debate_row()
    economics = Topic.objects.create(motion="Tax wealth, not work", category="Economics")

    def make(topic, rounds, status=DebateStatus.COMPLETED, **extra):
        return Debate.objects.create(
            topic=topic, model_a=template.model_a, model_b=template.model_b,
            persona_a=template.persona_a, persona_b=template.persona_b, model_a_position="pro",
            status=status, rounds=rounds, tokens_a=1000, tokens_b=1000, tokens_judging=200,
            cost_a=0.004, cost_b=0.004, cost_judging=0.002, **extra)

    for _ in range(6):
        make(template.topic, 3)
    make(economics, 1)
    make(economics, 1)
    make(template.topic, 3, handicapped="con", handicap="off_topic")  # calibration: left out
    make(template.topic, 3, status=DebateStatus.IN_PROGRESS)  # not finished: left out


def test_usage_by_category_withholds_the_small_kinds(debates):
    rows = {r.key: r for r in debate_usage(by="category")}
    assert list(rows) == ["Environment", "Economics", "all"]
    env = rows["Environment"]
    assert (env.debates, env.tokens, env.tokens_per_debate) == (6, 13200, 2200)
    assert (env.debater_tokens, env.judging_tokens) == (12000, 1200)
    assert env.cost_per_debate == pytest.approx(0.01)
    assert rows["Economics"].debates == 2 < USAGE_MIN_DEBATES
    assert rows["Economics"].withheld and rows["Economics"].tokens is None
    assert (rows["all"].debates, rows["all"].tokens) == (8, 17600)


def test_usage_by_rounds(debates):
    rows = {r.key: r for r in debate_usage(by="rounds")}
    assert rows["3"].label == "3 rounds" and rows["3"].tokens_per_debate == 2200
    assert rows["1"].label == "1 round" and rows["1"].withheld


def test_the_api_answers_both_groupings_and_refuses_others(debates):
    client = Client()
    data = client.get("/api/debates/usage", {"by": "rounds"}).json()
    assert data["by"] == "rounds" and data["min_debates"] == USAGE_MIN_DEBATES
    assert [r["key"] for r in data["rows"]] == ["3", "1", "all"]
    assert data["rows"][0]["tokens_per_debate"] == 2200 and data["rows"][1]["withheld"]
    assert client.get("/api/debates/usage").json()["by"] == "category"  # the default
    bad = client.get("/api/debates/usage", {"by": "model"})
    assert bad.status_code == 422
    assert bad.json()["detail"] == BAD_USAGE_BY.format(value="model")


def test_the_leaderboards_debates_section_shows_it(debates):
    html = Client().get("/leaderboard/", {"board": "debate-crowd"}).content.decode()
    assert 'data-testid="usage-category"' in html and 'data-testid="usage-rounds"' in html
    assert 'data-testid="usage-category-environment"' in html
    assert "withheld (under 5)" in html and "2200" in html


def test_the_command_prints_and_answers_json(debates, capsys):
    call_command("debate_usage", "--by", "rounds")
    out = capsys.readouterr().out
    assert "3 rounds" in out and "2,200" in out and "withheld" in out
    call_command("debate_usage", "--json")
    rows = json.loads(capsys.readouterr().out)
    assert rows[0] == {"key": "Environment", "debates": 6, "tokens": 13200,
                       "debater_tokens": 12000, "judging_tokens": 1200, "cost_usd": 0.06}
    with pytest.raises(CommandError, match="category or rounds"):
        call_command("debate_usage", "--by", "size")

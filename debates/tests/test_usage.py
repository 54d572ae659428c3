"""Token usage per kind of debate (seed 004): the selector, GET /api/debates/usage, the
leaderboard's debates section and manage.py debate_usage."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from debates.models import DebateStatus, Topic
from debates.tests.debate_support import completed_debate, debate_row
from debates.usage import BAD_USAGE_BY, USAGE_MIN_DEBATES, debate_usage

pytestmark = pytest.mark.django_db


@pytest.fixture
def debates():
    """Completed debates, each 1,000 tokens a side and 200 judging: six Environment ones
    (3 rounds), five Politics ones (2 rounds), four Economics ones (1 round), fifteen in all
    (three whole batches); one calibration run and one still running are left out."""
    template = debate_row()
    politics = Topic.objects.create(motion="Lower the voting age", category="Politics")
    economics = Topic.objects.create(motion="Tax wealth, not work", category="Economics")

    def make(topic, rounds, count=1, **extra):
        for _ in range(count):
            completed_debate(template, topic=topic, rounds=rounds, tokens_a=1000,
                             tokens_b=1000, tokens_judging=200, cost_a=0.004, **extra)

    make(template.topic, 3, 6)
    make(politics, 2, 5)
    make(economics, 1, 4)
    return template
    make(template.topic, 3, handicapped="con", handicap="off_topic")  # calibration: left out
    make(template.topic, 3, status=DebateStatus.IN_PROGRESS)  # not finished: left out


def test_small_kinds_are_withheld_and_cannot_be_worked_out(debates):
    rows = {r.key: r for r in debate_usage(by="category")}
    assert list(rows) == ["Environment", "Politics", "Economics", "all"]
    env = rows["Environment"]
    assert (env.debates, env.tokens, env.tokens_per_debate) == (6, 13200, 2200)
    assert (env.debater_tokens, env.judging_tokens) == (12000, 1200)
    assert rows["Economics"].debates == 4 < USAGE_MIN_DEBATES and rows["Economics"].withheld
    # Economics alone would be the total less the rest: the smallest shown kind goes too.
    assert rows["Politics"].debates == 5 and rows["Politics"].withheld
    assert rows["Politics"].tokens is None and rows["Politics"].tokens_per_debate is None
    assert (rows["all"].debates, rows["all"].tokens) == (15, 33000)


def test_usage_by_rounds(debates):
    rows = {r.key: r for r in debate_usage(by="rounds")}
    assert rows["3"].label == "3 rounds" and rows["3"].tokens_per_debate == 2200
    assert rows["1"].label == "1 round" and rows["1"].withheld and rows["2"].withheld


def test_nothing_is_counted_before_the_first_whole_batch():
    template = debate_row()
    completed_debate(template, tokens_a=10, tokens_b=20)
    rows = debate_usage(by="category")
    assert [(r.key, r.debates, r.withheld) for r in rows] == [("all", 0, True)]


def test_the_figures_move_in_batches_so_one_debate_ending_is_not_told(debates):
    # Read before and after a watched debate ends: the figures do not move until a whole
    # batch has completed, and then by a batch, not by that debate's tokens.
    before = debate_usage(by="category")
    completed_debate(debates, tokens_a=777, tokens_b=333, tokens_judging=11)
    assert debate_usage(by="category") == before
    for _ in range(USAGE_MIN_DEBATES - 1):
        completed_debate(debates, tokens_a=1000, tokens_b=1000, tokens_judging=200)
    after = {r.key: r for r in debate_usage(by="category")}
    assert after["all"].debates == before[-1].debates + USAGE_MIN_DEBATES
    assert after["all"].tokens == before[-1].tokens + 1121 + 4 * 2200


def test_the_api_answers_both_groupings_and_refuses_others(debates):
    client = Client()
    data = client.get("/api/debates/usage", {"by": "rounds"}).json()
    assert data["by"] == "rounds" and data["min_debates"] == USAGE_MIN_DEBATES
    assert [r["key"] for r in data["rows"]] == ["3", "2", "1", "all"]
    assert data["rows"][0]["tokens_per_debate"] == 2200 and data["rows"][2]["withheld"]
    assert "cost_usd" not in data["rows"][0]  # a price could turn a cost into a name
    assert client.get("/api/debates/usage").json()["by"] == "category"  # the default
    bad = client.get("/api/debates/usage", {"by": "model"})
    assert bad.status_code == 422
    assert bad.json()["detail"] == BAD_USAGE_BY.format(value="model")


def test_the_leaderboards_debates_section_shows_it(debates):
    html = Client().get("/leaderboard/", {"board": "debate-crowd"}).content.decode()
    assert 'data-testid="usage-category"' in html and 'data-testid="usage-rounds"' in html
    assert 'data-testid="usage-category-environment"' in html
    assert "withheld" in html and "2200" in html


def test_the_command_prints_and_answers_json(debates, capsys):
    call_command("debate_usage", "--by", "rounds")
    out = capsys.readouterr().out
    assert "3 rounds" in out and "2,200" in out and "withheld" in out and "$" not in out
    call_command("debate_usage", "--json")
    rows = json.loads(capsys.readouterr().out)
    assert rows[0] == {"key": "Environment", "debates": 6, "tokens": 13200,
                       "debater_tokens": 12000, "judging_tokens": 1200}
    with pytest.raises(CommandError, match="category or rounds"):
        call_command("debate_usage", "--by", "size")

"""A debate tells nobody who is who before their vote, and a creator who chose the line-up
decides nothing (issue 33, findings 1 and 2).

The attacks: ``GET /api/debates/{id}`` gave any viewer each side's tokens and ``cost_usd``
before the vote, and ``GET /api/models/{id}`` publishes prices, so 2.8e-05 USD for 239 tokens
named the one model whose price fits; the page showed cost and milliseconds per turn. A
creator may choose the two models and each one's persona, so they know who is who from the
page, and on their unlisted motion their vote alone made the crowd's result."""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings
from django.test import Client

from debates import services
from debates.crowd import CHOSEN_BY_CREATOR, debate_vote
from debates.majority import crowd_tally
from debates.models import CrowdVote, DebateTurn
from debates.tests.debate_support import debate_row, library, make_model
from testkit.visitors import visitor_session_key

pytestmark = pytest.mark.django_db

COST_A, COST_B = 0.0000281, 0.0000917  # figures a price turns into a name
TOKENS_A, TOKENS_B = 239, 411
LATENCY = 5678
MOTION = "Cats are better pets than dogs"


def viewer() -> tuple[Client, str]:
    key = visitor_session_key()
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = key
    return client, key


@pytest.fixture
def costed_debate():
    debate = debate_row(tokens_a=TOKENS_A, tokens_b=TOKENS_B, cost_a=COST_A, cost_b=COST_B,
                        tokens_judging=50, cost_judging=0.00001)
    DebateTurn.objects.filter(debate=debate).update(input_tokens=100, output_tokens=139,
                                                    latency_ms=LATENCY)
    return debate


def figures_in(text: str) -> list[str]:
    """The figures that appear as figures: "239" inside a UUID's hex or a timestamp's
    milliseconds (".239Z") is not a token count."""
    figures = (str(TOKENS_A), str(TOKENS_B), "2.81e-05", "0.0000281", "0.0001", "0.0000917",
               "9.17e-05", str(LATENCY), "5,678")
    found = [f for f in figures if re.search(rf"(?<![\w.]){re.escape(f)}(?!\w)", text)]
    return found + (["$"] if "$" in text else [])


def test_no_viewer_sees_a_sides_tokens_cost_or_timing_before_voting(costed_debate):
    client, _ = viewer()
    data = client.get(f"/api/debates/{costed_debate.pk}").json()
    assert [(s["tokens"], s["cost_usd"]) for s in data["sides"]] == [(None, None)] * 2
    assert (data["tokens"], data["cost_usd"]) == (None, None)
    assert [(t["tokens"], t["latency_ms"]) for t in data["transcript"]] == [(None, None)]
    assert figures_in(json.dumps(data)) == []
    page = client.get(f"/debates/{costed_debate.pk}/").content.decode()
    assert figures_in(re.sub(r"<script.*?</script>", "", page, flags=re.S)) == []


def test_the_figures_come_with_the_vote(costed_debate):
    client, _ = viewer()
    voted = client.post("/api/debate/vote", {"debate_id": str(costed_debate.pk),
                                             "choice": "pro"}, content_type="application/json")
    assert voted.status_code == 200, voted.content
    assert {s["tokens"] for s in voted.json()["sides"]} == {TOKENS_A, TOKENS_B}
    data = client.get(f"/api/debates/{costed_debate.pk}").json()
    assert {s["cost_usd"] for s in data["sides"]} == {round(COST_A, 6), round(COST_B, 6)}
    assert data["transcript"][0]["latency_ms"] == LATENCY
    assert f"{LATENCY}" in client.get(f"/debates/{costed_debate.pk}/").content.decode()


@pytest.fixture
def registry(fake_openai):
    library()
    for slug in ("alpha-7b", "beta-3b"):
        make_model(fake_openai, slug)


@pytest.mark.parametrize("choice", [
    {"model_a": "alpha-7b", "model_b": "beta-3b"},
    {"model_a": "alpha-7b"},
    {"persona_a": "Tester One", "persona_b": "Tester Two"},
])
def test_a_debate_whose_creator_chose_its_line_up_never_counts_the_creators_vote(
        registry, choice):
    creator = visitor_session_key()
    debate = services.debate_create(session_key=creator, motion=MOTION, **choice)
    assert debate.chosen and not debate.is_listed
    DebateTurn.objects.create(debate=debate, round=1, position="pro", speaker=debate.model_a,
                              speech="An opening.")
    own = debate_vote(debate_id=debate.pk, session_key=creator, choice="pro")
    assert not own.counts_for_rating and own.exclusion_reason == CHOSEN_BY_CREATOR
    debate.refresh_from_db()
    assert crowd_tally(debate) == {"pro": 0, "con": 0, "tie": 0}
    assert debate.human_winner == "" and debate.crowd_outcome == ""
    other = debate_vote(debate_id=debate.pk, session_key=visitor_session_key(), choice="con")
    assert other.counts_for_rating
    debate.refresh_from_db()
    assert debate.human_winner == "con"


def test_a_drawn_line_up_counts_its_creators_vote(registry):
    creator = visitor_session_key()
    debate = services.debate_create(session_key=creator, motion=MOTION)
    assert not debate.chosen
    DebateTurn.objects.create(debate=debate, round=1, position="pro", speaker=debate.model_a,
                              speech="An opening.")
    assert debate_vote(debate_id=debate.pk, session_key=creator, choice="pro").counts_for_rating


def test_the_page_and_the_api_say_the_line_up_was_chosen(registry):
    creator_client, creator = viewer()
    debate = services.debate_create(session_key=creator, model_a="alpha-7b",
                                    model_b="beta-3b", motion=MOTION)
    stranger, _ = viewer()
    assert stranger.get(f"/api/debates/{debate.pk}").json()["chosen"] is True
    assert "chose" in stranger.get(f"/debates/{debate.pk}/").content.decode()
    assert "your vote will not count" in creator_client.get(
        f"/debates/{debate.pk}/").content.decode().lower()
    assert not CrowdVote.objects.exists()

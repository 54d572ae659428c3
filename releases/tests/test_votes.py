"""Each mode's vote takes the voter's "my prompts and answers may be published": unticked
(false) unless sent, through the page's form and the JSON API alike."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from agents.models import AgentVote
from agents.tests.voice_support import echo_agents
from battles.models import Vote
from debates.models import CrowdVote

from .support import finished_debate, talked_voice_battle, text_battle, visitor

pytestmark = pytest.mark.django_db


def post_json(client: Client, url: str, payload: dict):
    return client.post(url, data=json.dumps(payload), content_type="application/json")


@pytest.mark.parametrize(("sent", "stored"), [({}, False), ({"publish_text": True}, True),
                                              ({"publish_text": False}, False)])
def test_the_battle_vote_api_takes_publish_text(sent, stored):
    client = Client()
    battle = text_battle(visitor(client))
    answer = post_json(client, f"/api/battles/{battle.pk}/vote", {"vote": "tie", **sent})
    assert answer.status_code == 200, answer.content
    assert Vote.objects.get(battle=battle).publish_text is stored


def test_a_malformed_publish_text_is_422_and_records_no_vote():
    client = Client()
    battle = text_battle(visitor(client))
    answer = post_json(client, f"/api/battles/{battle.pk}/vote",
                       {"vote": "tie", "publish_text": "maybe"})
    assert answer.status_code == 422 and "publish_text" in answer.json()["detail"]
    assert not Vote.objects.filter(battle=battle).exists()


@pytest.mark.parametrize(("form", "stored"), [({}, False), ({"publish_text": "1"}, True)])
def test_the_battle_page_form_takes_the_checkbox(form, stored):
    client = Client()
    battle = text_battle(visitor(client))
    page = client.get(f"/battle/{battle.pk}/").content.decode()
    assert 'name="publish_text"' in page and 'data-testid="publish-text"' in page
    assert "checked" not in page.split('data-testid="publish-text"')[0].rsplit("<input", 1)[1]
    answer = client.post(f"/battle/{battle.pk}/vote", {"vote": "left_better", **form},
                         HTTP_HX_REQUEST="true")
    assert answer.status_code == 200
    assert Vote.objects.get(battle=battle).publish_text is stored


@pytest.mark.parametrize(("sent", "stored"), [({}, False), ({"publish_text": True}, True)])
def test_the_debate_vote_api_takes_publish_text(sent, stored):
    client = Client()
    visitor(client)
    debate = finished_debate()
    answer = post_json(client, "/api/debate/vote",
                       {"debate_id": str(debate.pk), "choice": "con", **sent})
    assert answer.status_code == 200, answer.content
    assert CrowdVote.objects.get(debate=debate).publish_text is stored


def test_the_debate_page_form_takes_the_checkbox():
    client = Client()
    visitor(client)
    debate = finished_debate()
    page = client.get(f"/debates/{debate.pk}/").content.decode()
    assert 'data-testid="publish-text"' in page
    answer = client.post(f"/debates/{debate.pk}/vote/", {"choice": "pro", "publish_text": "1"})
    assert answer.status_code in (200, 302)
    assert CrowdVote.objects.get(debate=debate).publish_text is True


@pytest.mark.parametrize(("sent", "stored"), [({}, False), ({"publish_text": True}, True)])
def test_the_voice_vote_api_takes_publish_text(sent, stored):
    client = Client()
    battle = talked_voice_battle(visitor(client))
    answer = post_json(client, f"/battles/{battle.pk}/vote", {"overall": "a", **sent})
    assert answer.status_code == 200, answer.content
    assert AgentVote.objects.get(battle=battle).publish_text is stored


def test_the_voice_page_offers_the_checkbox_unticked(client):
    echo_agents()
    page = client.get("/voice/").content.decode()
    box = page.split('data-testid="publish-text"')[0].rsplit("<input", 1)[1]
    assert 'name="publish_text"' in box and "checked" not in box

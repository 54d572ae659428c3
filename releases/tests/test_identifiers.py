"""A release publishes opaque ids: a contest_id opens no page, and no id of the arena's own
(of any mode's contests or votes) is in the files."""

from __future__ import annotations

import csv

import pytest
from django.test import Client

from agents.models import AgentVote
from agents.services import agent_battle_vote
from battles.models import Vote
from battles.tests.factories import AIModelFactory, vote_on
from debates.crowd import debate_vote
from debates.models import CrowdVote
from panels.models import Panel, PanelJudgement, PanelOutcome, PanelStatus
from releases.identifiers import contest_key, vote_key
from releases.selectors import release_dir
from releases.services import CSV, release_build

from .support import complete, finished_debate, talked_voice_battle, text_battle, visitor

pytestmark = pytest.mark.django_db


def _csv_rows(release) -> list[dict]:
    with (release_dir(release.date) / CSV).open(newline="") as stream:
        return list(csv.DictReader(stream))


def test_an_unticked_votes_contest_id_opens_no_battle_and_no_real_id_is_published():
    key = visitor(Client())
    battle = text_battle(key, prompt="Keep this one to myself.")
    vote_on(battle, choice="left_better")  # publish_text unticked
    assert Client().get(f"/battle/{battle.pk}/").status_code == 200  # a real id opens it
    debate = finished_debate()
    debate_vote(debate_id=debate.pk, session_key="viewer-1", choice="pro")
    complete(debate)
    voice = talked_voice_battle(key)
    agent_battle_vote(battle_id=voice.pk, session_key=key, overall="a")
    alpha, beta = AIModelFactory(slug="id-alpha"), AIModelFactory(slug="id-beta")
    panel = Panel.objects.create(status=PanelStatus.DONE, question="Private question?")
    judgement = PanelJudgement.objects.create(panel=panel, judge=alpha)
    PanelOutcome.objects.create(judgement=judgement, panel=panel, judge=alpha, model_a=alpha,
                                model_b=beta, winner="model_a", is_self_vote=False)

    release, _ = release_build()
    rows = _csv_rows(release)
    assert {r["mode"] for r in rows} == {"battle", "debate", "voice", "panel"}
    [text_row] = [r for r in rows if r["mode"] == "battle"]
    assert text_row["contest_id"] == contest_key("battle", battle.pk)
    assert Client().get(f"/battle/{text_row['contest_id']}/").status_code == 404

    real = {str(pk) for pk in (battle.pk, debate.pk, voice.pk, panel.pk)}
    real |= {str(pk) for model in (Vote, CrowdVote, AgentVote, PanelOutcome)
             for pk in model.objects.values_list("pk", flat=True)}
    for row in rows:
        assert row["id"] not in real and row["contest_id"] not in real
        assert row["id"] == vote_key(row["mode"], _real_vote(row["mode"]))
    text = (release_dir(release.date) / CSV).read_text()
    assert not [pk for pk in real if len(pk) > 8 and pk in text]  # no UUID anywhere


def _real_vote(mode: str):
    """The one vote of ``mode`` in this test."""
    model = {"battle": Vote, "debate": CrowdVote, "voice": AgentVote, "panel": PanelOutcome}[mode]
    return model.objects.get().pk


def test_an_id_is_stable_and_cannot_be_made_without_the_secret_key(settings):
    first = contest_key("battle", "1b2c")
    assert contest_key("battle", "1b2c") == first and len(first) == 20
    assert contest_key("debate", "1b2c") != first and vote_key("battle", "1b2c") != first
    settings.SECRET_KEY = "another-" + settings.SECRET_KEY
    assert contest_key("battle", "1b2c") != first

"""The new-debate form takes what the person typed (no worker: the debate only has to be
created as asked)."""

from __future__ import annotations

import pytest
from django.test import Client

from debates.models import Debate
from debates.tests.debate_support import library
from testkit.registry import make_model

pytestmark = pytest.mark.django_db

MOTION = "This house would teach chess in every primary school"


@pytest.fixture
def models(fake_openai, settings):
    for slug in ("alpha-7b", "beta-3b", "gamma-1b"):
        make_model(fake_openai, slug)
    settings.ARENA_DEBATE_JUDGE_MODEL = "gamma-1b"
    return library()


def test_a_typed_motion_is_used_with_the_topic_left_on_random(models):
    """The newcomer typed a motion and left Topic on "Random topic": the debate ran on a
    random library motion instead."""
    response = Client().post("/debates/new/", {"topic": "", "motion": MOTION, "rounds": "1",
                                               "word_limit": "60"})
    assert response.status_code == 302, response.content.decode()[:500]
    debate = Debate.objects.get()
    assert debate.topic.motion == MOTION
    assert not debate.is_listed  # a motion someone wrote stays unlisted


def test_a_library_topic_and_a_typed_motion_ask_for_one_of_them(models):
    topic, *_ = models
    response = Client().post("/debates/new/", {"topic": str(topic.pk), "motion": MOTION,
                                               "rounds": "1", "word_limit": "60"})
    assert response.status_code in (400, 422)
    assert "give a topic or your own motion, not both" in response.content.decode()
    assert MOTION in response.content.decode()  # what was typed is kept in the form
    assert not Debate.objects.exists()


def test_random_topic_without_a_motion_draws_one_from_the_library(models):
    topic, *_ = models
    response = Client().post("/debates/new/", {"topic": "", "motion": "  ", "rounds": "1",
                                               "word_limit": "60"})
    assert response.status_code == 302
    assert Debate.objects.get().topic.category != "Proposed"

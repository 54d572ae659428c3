"""A signed-in person with something done in every mode, for the profile's tests."""

from __future__ import annotations

from django.test import Client

from accounts.services import profile_of
from accounts.tests.support import person, sign_in
from battles.tests.factories import AIModelFactory, answered_battle, vote_on
from debates.crowd import debate_vote
from releases.tests.support import finished_debate, talked_voice_battle

PROMPT = "My neighbour Jo Doe at 12 Elm Street asked: what is a prime?"


def signed_in_client(email: str = "ada@example.com"):
    user = person(email)
    client = Client()
    sign_in(client, email)
    return user, client, profile_of(user).visitor_key


def voted_battle(key: str, a, b, choice: str = "left_better", prompt: str = PROMPT):
    battle = answered_battle(session_key=key, model_a=a, model_b=b, prompt=prompt)
    vote_on(battle, choice=choice)
    return battle


def models(n: int = 3) -> list:
    return [AIModelFactory() for _ in range(n)]


def something_in_every_mode(key: str) -> dict:
    a, b, _c = models()
    battle = voted_battle(key, a, b)
    unvoted = answered_battle(session_key=key, prompt="Still blind: who wrote this?")
    debate = finished_debate()
    debate_vote(debate_id=debate.pk, session_key=key, choice="pro", wager=50)
    voice = talked_voice_battle(key)
    return {"battle": battle, "unvoted": unvoted, "debate": debate, "voice": voice}

"""POST /me/delete and DELETE /api/me: the account and its personal data go; the votes stay
only as anonymised records, and every public board is computed exactly as before."""

from __future__ import annotations

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client

from accounts.deletion import ANONYMISED, BANNED, NOT_CONFIRMED, REMOVED
from accounts.models import ApiToken, Profile, SignIn
from accounts.tests.me_support import (
    PROMPT,
    models,
    signed_in_client,
    something_in_every_mode,
    voted_battle,
)
from accounts.tests.support import sign_in
from accounts.tokens import token_create
from agents.models import AgentConversation, AgentVote
from agents.services import agent_battle_vote
from battles.models import Battle, Response, Thread, Turn, Vote
from debates.models import CrowdVote, PointsAccount, Topic
from leaderboard.boards import board_names
from leaderboard.runs.services import board_recompute

pytestmark = pytest.mark.django_db


def every_board() -> dict[str, list[tuple]]:
    """Each board as a rating run computes it now: its entries' figures."""
    out = {}
    for name in board_names():
        snapshot = board_recompute(board_name=name)
        out[name] = sorted(snapshot.entries.values_list(
            "subject", "rating", "ci_lower", "ci_upper", "votes", "wins", "losses", "ties",
            "provisional", "style_rating"))
    return out


def a_person_with_votes_among_others():
    user, client, key = signed_in_client()
    made = something_in_every_mode(key)
    agent_battle_vote(battle_id=made["voice"].pk, session_key=key, overall="a")
    a, b, c = models()
    for choice in ("left_better", "right_better", "tie", "left_better"):
        voted_battle(key, a, b, choice)
        voted_battle("someone-else", b, c, choice, prompt="Someone else's prompt")
    token_create(user=user, name="laptop")
    SocialAccount.objects.create(user=user, provider="google", uid="1099")
    Topic.objects.create(motion="My own motion about Jo Doe", category="tech",
                         proposed_by=key, is_approved=False)
    return user, client, key, made


def test_deleting_leaves_every_public_board_exactly_as_it_was():
    _user, client, key, _made = a_person_with_votes_among_others()
    before = every_board()
    assert before["text"], "the text board has entries to compare"
    counted_before = Vote.objects.filter(counts_for_rating=True).count()
    answer = client.post("/me/delete", {"confirmation": "delete my account"})
    assert answer.status_code == 200
    assert every_board() == before
    assert Vote.objects.filter(counts_for_rating=True).count() == counted_before
    assert not Vote.objects.filter(session_key=key).exists()


def test_deleting_removes_the_account_and_what_the_person_typed():
    user, client, key, made = a_person_with_votes_among_others()
    other_session = Client()
    sign_in(other_session)
    assert client.post("/me/delete", {"confirmation": "Delete my account"}).status_code == 200
    assert not get_user_model().objects.filter(pk=user.pk).exists()
    for model in (EmailAddress, SocialAccount, ApiToken, SignIn, Profile):
        assert not model.objects.filter(user_id=user.pk).exists(), model
    assert not Session.objects.exists()  # both browsers signed out
    assert other_session.get("/me/").status_code == 302
    # The prompts, answers and titles are blanked; the battles and votes remain, anonymised.
    battle = Battle.objects.get(pk=made["battle"].pk)
    assert battle.session_key.startswith(ANONYMISED) and battle.title == REMOVED
    assert Vote.objects.get(battle=battle).session_key == battle.session_key
    assert set(Turn.objects.filter(battle__session_key=battle.session_key)
               .values_list("prompt", flat=True)) == {REMOVED}
    assert not Turn.objects.filter(prompt=PROMPT).exists()
    assert set(Response.objects.filter(turn__battle=battle).values_list("text", flat=True)) \
        == {""}
    assert set(Thread.objects.filter(session_key=battle.session_key)
               .values_list("title", flat=True)) == {REMOVED}
    assert Topic.objects.get(proposed_by=battle.session_key).motion == REMOVED
    assert not AgentConversation.objects.filter(battle=made["voice"]).exclude(
        turns_json=[]).exists()
    # Every mode's rows under one fresh key that no session, account or token holds.
    fresh = battle.session_key
    assert CrowdVote.objects.get(debate=made["debate"]).session_key == fresh
    assert AgentVote.objects.get(battle=made["voice"]).session_key == fresh
    assert PointsAccount.objects.get(session_key=fresh).points == 950
    assert not Profile.objects.filter(visitor_key=fresh).exists()


def test_someone_elses_prompts_are_untouched():
    _user, client, _key, _made = a_person_with_votes_among_others()
    client.post("/me/delete", {"confirmation": "delete my account"})
    assert Turn.objects.filter(prompt="Someone else's prompt").count() == 4
    assert Battle.objects.filter(session_key="someone-else").count() == 4


def test_without_the_confirmation_nothing_is_deleted():
    user, client, key = signed_in_client()
    answer = client.post("/me/delete", {"confirmation": "yes"})
    assert answer.status_code == 400
    assert NOT_CONFIRMED in answer.content.decode().replace("&quot;", '"')
    assert get_user_model().objects.filter(pk=user.pk).exists()
    assert client.get("/me/").status_code == 200


def test_the_api_deletes_too():
    user, client, key = signed_in_client()
    voted_battle(key, *models(2))
    assert client.delete("/api/me").status_code == 204
    assert not get_user_model().objects.filter(pk=user.pk).exists()
    assert Vote.objects.get().session_key.startswith(ANONYMISED)
    assert client.get("/api/me").status_code == 401


def test_a_banned_persons_votes_do_not_count_again_once_the_account_is_deleted():
    user, client, key = signed_in_client()
    voted_battle(key, *models(2))
    Profile.objects.filter(user=user).update(banned=True)
    client.post("/me/delete", {"confirmation": "delete my account"})
    vote = Vote.objects.get()
    assert not vote.counts_for_rating and vote.exclusion_reason == BANNED

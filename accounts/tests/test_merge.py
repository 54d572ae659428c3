"""What a visitor did anonymously follows them into their account when they sign in."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import Profile
from accounts.tests.support import person, sign_in
from arena.sessions import ACCOUNT_KEY
from arena.visitor_merge import VOTED_TWICE, visitor_merge
from battles.models import Battle, Vote
from battles.tests.factories import answered_battle, vote_on
from debates.crowd import debate_vote, points_of
from debates.models import STARTING_POINTS, CrowdVote, PointsAccount
from releases.tests.support import finished_debate, visitor

pytestmark = pytest.mark.django_db


def test_signing_in_moves_the_anonymous_battles_and_votes_to_the_account():
    user = person()
    client = Client()
    key = visitor(client)
    battle = answered_battle(session_key=key)
    vote_on(battle, choice="left_better")
    sign_in(client)
    account_key = Profile.objects.get(user=user).visitor_key
    assert client.session[ACCOUNT_KEY] == account_key
    assert Battle.objects.get(pk=battle.pk).session_key == account_key
    assert Vote.objects.get(battle=battle).session_key == account_key
    # Theirs from any browser they sign in with, and nobody else's.
    elsewhere = Client()
    sign_in(elsewhere)
    assert elsewhere.get("/api/sessions").json()["total"] == 1
    assert Client().get("/api/sessions").json()["total"] == 0


def test_a_debate_voted_anonymously_and_signed_in_counts_once_and_nothing_is_deleted():
    user = person()
    account_key = Profile.objects.create(user=user).visitor_key
    debate = finished_debate()
    debate_vote(debate_id=debate.pk, session_key=account_key, choice="pro")
    client = Client()
    anonymous = visitor(client)
    debate_vote(debate_id=debate.pk, session_key=anonymous, choice="con")
    sign_in(client)
    votes = {v.choice: v for v in CrowdVote.objects.filter(debate=debate)}
    assert votes["pro"].session_key == account_key and votes["pro"].counts_for_rating
    assert not votes["con"].counts_for_rating and votes["con"].exclusion_reason == VOTED_TWICE
    assert CrowdVote.objects.filter(debate=debate).count() == 2


def test_points_won_or_lost_anonymously_join_the_accounts_balance():
    account, anonymous = "account-key-1", "anon-key-1"
    PointsAccount.objects.create(session_key=account, points=1500)
    PointsAccount.objects.create(session_key=anonymous, points=STARTING_POINTS - 300)
    visitor_merge(anonymous, account)
    assert points_of(account) == 1200
    assert not PointsAccount.objects.filter(session_key=anonymous).exists()
    visitor_merge(anonymous, account)  # again: nothing left to move
    assert points_of(account) == 1200


def test_a_fresh_grant_is_not_added_to_the_account_again():
    PointsAccount.objects.create(session_key="account-key-2", points=800)
    PointsAccount.objects.create(session_key="anon-key-2", points=STARTING_POINTS)
    visitor_merge("anon-key-2", "account-key-2")
    assert points_of("account-key-2") == 800


def test_signing_in_again_moves_nothing_twice():
    person()
    client = Client()
    key = visitor(client)
    answered_battle(session_key=key)
    sign_in(client)
    client.post("/accounts/logout/")
    sign_in(client)
    assert Battle.objects.count() == 1

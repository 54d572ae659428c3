"""Signing in moves what the visitor did anonymously in every mode to the account: text
battles and their sessions and votes, panels, debates started, debate votes and wagers and
the points balance, voice battles and their votes, motions proposed. One transaction, and
running it again changes nothing."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import models
from django.test import Client

from accounts.bans import account_unban
from accounts.models import Profile
from accounts.tests.support import person, sign_in
from agents.models import AgentBattle, AgentVote
from agents.services import agent_battle_vote
from arena import visitor_merge as merge_module
from arena.contests.bans import VOTER_BANNED, voter_ban
from arena.contests.flags import flagged_visitors
from arena.models import VisitorFlag, VoterBan
from arena.modes import modes
from arena.visitor_merge import VOTED_TWICE, session_fields, visitor_merge
from battles.models import Battle, Thread, Vote
from battles.tests.factories import vote_on
from debates.crowd import debate_vote, points_of
from debates.models import (
    STARTING_POINTS,
    CrowdVote,
    Debate,
    DebateTurn,
    PointsAccount,
    Topic,
)
from panels.models import Panel, PanelStatus
from releases.tests.support import finished_debate, talked_voice_battle, text_battle, visitor
from testkit.ratings import quiet_rating_runs

pytestmark = pytest.mark.django_db


def another_debate(template: Debate, **fields) -> Debate:
    """A debate in progress like ``template`` (its topic, models and personas), one speech."""
    debate = Debate.objects.create(
        topic=template.topic, model_a=template.model_a, model_b=template.model_b,
        persona_a=template.persona_a, persona_b=template.persona_b, model_a_position="pro",
        status=template.status, judge_model=template.judge_model, **fields)
    DebateTurn.objects.create(debate=debate, round=1, position="pro", speaker=debate.model_a,
                              speech="An opening.")
    return debate


def anonymous_work(key: str) -> dict:
    """One of everything a visitor can do anonymously, under ``key``."""
    battle = text_battle(key)
    vote_on(battle, choice="left_better")
    panel = Panel.objects.create(session_key=key, question="Why is the sky blue?",
                                 status=PanelStatus.DONE)
    watched = finished_debate()
    own_debate = another_debate(watched, session_key=key)
    debate_vote(debate_id=watched.pk, session_key=key, choice="pro", wager=200)
    voice = talked_voice_battle(key)
    agent_battle_vote(battle_id=voice.pk, session_key=key, overall="a")
    topic = Topic.objects.create(motion="Cities should ban cars", category="Proposed",
                                 is_approved=False, proposed_by=key)
    return {"battle": battle, "panel": panel, "debate": own_debate, "watched": watched,
            "voice": voice, "topic": topic}


def owners(work: dict) -> dict[str, str]:
    """The key each row of ``work`` is kept under now."""
    battle = Battle.objects.get(pk=work["battle"].pk)
    return {
        "battle": battle.session_key,
        "thread": Thread.objects.get(pk=battle.thread_id).session_key,
        "vote": Vote.objects.get(battle=battle).session_key,
        "panel": Panel.objects.get(pk=work["panel"].pk).session_key,
        "debate": Debate.objects.get(pk=work["debate"].pk).session_key,
        "crowd vote": CrowdVote.objects.get(debate=work["watched"]).session_key,
        "voice battle": AgentBattle.objects.get(pk=work["voice"].pk).session_key,
        "voice vote": AgentVote.objects.get(battle=work["voice"]).session_key,
        "topic": Topic.objects.get(pk=work["topic"].pk).proposed_by,
    }


def test_signing_in_moves_the_anonymous_work_of_every_mode_to_the_account():
    user = person()
    client = Client()
    anonymous = visitor(client)
    work = anonymous_work(anonymous)
    assert points_of(anonymous) == STARTING_POINTS - 200  # the wager was taken

    sign_in(client)

    account_key = Profile.objects.get(user=user).visitor_key
    assert owners(work) == dict.fromkeys(owners(work), account_key)
    wager = CrowdVote.objects.get(debate=work["watched"])
    assert (wager.wager, wager.counts_for_rating) == (200, True)
    assert points_of(account_key) == STARTING_POINTS - 200
    assert not PointsAccount.objects.filter(session_key=anonymous).exists()
    for model, field in session_fields():  # nothing of any mode is left behind
        assert not model.objects.filter(**{field: anonymous}).exists(), (model, field)
    # What the pages and the API list for the person, from another browser.
    elsewhere = Client()
    sign_in(elsewhere)
    assert elsewhere.get("/api/sessions").json()["total"] == 1
    assert Client().get("/api/sessions").json()["total"] == 0


def test_merging_again_moves_nothing_and_changes_nothing():
    user = person()
    client = Client()
    anonymous = visitor(client)
    work = anonymous_work(anonymous)
    sign_in(client)
    account_key = Profile.objects.get(user=user).visitor_key
    before = (owners(work), points_of(account_key),
              sorted(CrowdVote.objects.values_list("session_key", "counts_for_rating")))

    assert visitor_merge(anonymous, account_key) == 0

    after = (owners(work), points_of(account_key),
             sorted(CrowdVote.objects.values_list("session_key", "counts_for_rating")))
    assert after == before


def test_a_debate_voted_both_ways_counts_once_and_the_wagers_are_both_kept():
    user = person()
    account_key = Profile.objects.create(user=user).visitor_key
    debate = finished_debate()
    debate_vote(debate_id=debate.pk, session_key=account_key, choice="pro", wager=100)
    client = Client()
    anonymous = visitor(client)
    debate_vote(debate_id=debate.pk, session_key=anonymous, choice="pro", wager=50)

    sign_in(client)  # the session's key rotates first: the vote left behind is under it
    rotated = client.session.session_key
    assert visitor_merge(rotated, account_key) == 0  # and again: still once

    counted = CrowdVote.objects.filter(debate=debate, counts_for_rating=True)
    assert list(counted.values_list("session_key", flat=True)) == [account_key]
    twice = CrowdVote.objects.get(debate=debate, session_key=rotated)
    assert (twice.counts_for_rating, twice.exclusion_reason) == (False, VOTED_TWICE)
    # Both wagers were taken from what each key had; the balances joined.
    assert points_of(account_key) == STARTING_POINTS - 100 - 50


def test_a_flagged_sessions_flag_follows_it_into_the_account():
    """Signing in (or a rotated key) does not clear what the integrity sweep found."""
    user = person()
    client = Client()
    anonymous = visitor(client)
    VisitorFlag.objects.create(mode="battles", visitor=f"session:{anonymous}",
                               reason="burst: 90 votes within 120 s")
    sign_in(client)
    account_key = Profile.objects.get(user=user).visitor_key
    assert list(VisitorFlag.objects.values_list("mode", "visitor")) == [
        ("battles", f"session:{account_key}")]
    assert flagged_visitors("battles") == {f"session:{account_key}":
                                           "burst: 90 votes within 120 s"}


def test_a_banned_session_that_signs_in_brings_its_ban_to_the_account(monkeypatch):
    quiet_rating_runs(monkeypatch)
    user = person()
    client = Client()
    anonymous = visitor(client)
    earlier = vote_on(text_battle(anonymous), choice="left_better")
    voter_ban(visitor=f"session:{anonymous}", by="staff")
    sign_in(client)
    profile = Profile.objects.get(user=user)
    assert profile.banned
    assert VoterBan.objects.get().visitor == f"session:{profile.visitor_key}"
    later = vote_on(text_battle(profile.visitor_key), choice="left_better")
    assert (later.counts_for_rating, later.exclusion_reason) == (False, VOTER_BANNED)
    # Lifting it (as staff lift an account's ban) counts both again.
    assert account_unban(profile=profile, by="staff") == 2
    assert Vote.objects.get(pk=earlier.pk).counts_for_rating


def test_a_merge_that_fails_part_way_moves_nothing(monkeypatch):
    anonymous, account_key = "anon-key-failing", "account-key-failing"
    battle = text_battle(anonymous)
    topic = Topic.objects.create(motion="Homework should be optional", category="Proposed",
                                 is_approved=False, proposed_by=anonymous)
    moved_before = merge_module._move

    def failing_move(model, field, old, new):
        if model is Topic:
            raise RuntimeError("the database went away")
        return moved_before(model, field, old, new)

    monkeypatch.setattr(merge_module, "_move", failing_move)
    with pytest.raises(RuntimeError):
        visitor_merge(anonymous, account_key)

    assert Battle.objects.get(pk=battle.pk).session_key == anonymous  # rolled back
    assert Topic.objects.get(pk=topic.pk).proposed_by == anonymous


def test_every_column_holding_a_visitors_key_is_declared_by_its_mode():
    """A mode's model with a column of a visitor's key that no ``session_fields`` names would
    be left behind at sign-in."""
    declared = {(model, field) for model, field in session_fields()}
    mode_apps = {dotted.split(".")[0] for mode in modes() for dotted in mode.session_fields}
    holding = {
        (model, field.name)
        for app_label in mode_apps
        for model in apps.get_app_config(app_label).get_models()
        for field in model._meta.get_fields()
        if isinstance(field, models.CharField)
        and (field.name.endswith("session_key") or field.name in ("proposed_by", "owner_key"))
    }
    assert holding, "the rule found no column at all"
    assert holding <= declared, holding - declared

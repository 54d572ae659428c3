"""A battle's categories: classified once after its vote (in the worker, in batches), multi-turn
after a follow-up, written by export_votes for ``rate --category``."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from arena.models import AIModel, ModelCall, ProviderKind
from arena.prompt_categories import (
    CATEGORY_BITS,
    Classification,
    category_tags,
    classify_by_rules,
)
from battles import categories, services
from battles.categories import CLASSIFY_TASK, battles_classify, votes_classify_pending
from battles.models import Battle, Vote
from battles.tests.factories import answered_battle, vote_on

pytestmark = pytest.mark.django_db


def battle_classify(battle) -> Classification | None:
    return battles_classify([battle.pk]).get(battle.pk)


def tags(battle) -> set[str]:
    battle = Battle.objects.get(pk=battle.pk)
    return category_tags(battle.categories, battle.language)


@pytest.fixture
def classifier(fake_openai, settings):
    model = AIModel.objects.create(
        slug="sorter", name="Sorter", provider="Fakeprov", provider_kind=ProviderKind.OPENAI,
        base_url=fake_openai.base_url, api_key_env=fake_openai.api_key_env,
        api_model="sorter-api", max_tokens=64)
    settings.ARENA_CLASSIFIER_MODEL = model.slug
    fake_openai.reply_text = json.dumps({"kind": "creative_writing",
                                         "hard_prompt_criteria": ["creativity"]})
    return fake_openai


def test_votes_of_unclassified_battles_wait_and_one_run_is_sent_for_a_burst(
        monkeypatch, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(categories, "send_task",
                        lambda name, args, countdown=None: sent.append((name, args)))
    battles = [answered_battle(prompt=f"Write a haiku about the sea, number {i}")
               for i in range(3)]
    for battle in battles:
        with django_capture_on_commit_callbacks(execute=True):
            vote_on(battle, choice="tie")
    assert sent == [(CLASSIFY_TASK, [])]  # one run for the three votes
    assert Vote.objects.filter(categories_pending=True).count() == 3
    classified = answered_battle(prompt="Another", classified_at=battles[0].created_at)
    with django_capture_on_commit_callbacks(execute=True):
        vote_on(classified, choice="tie")
    assert not Vote.objects.get(battle=classified).categories_pending  # nothing to wait for

    assert votes_classify_pending() == 3  # the run takes them all
    for battle in battles:
        vote = Vote.objects.get(battle=battle)
        assert not vote.categories_pending
        assert category_tags(vote.categories, vote.language) == tags(battle) \
            == {"creative_writing", "lang-en"}
    assert votes_classify_pending() == 0
    with django_capture_on_commit_callbacks(execute=True):  # the run let go of its key
        vote_on(answered_battle(prompt="A fourth"), choice="tie")
    assert sent == [(CLASSIFY_TASK, [])] * 2


def test_a_broker_that_refuses_the_run_fails_no_vote(
        monkeypatch, django_capture_on_commit_callbacks):
    from kombu.exceptions import OperationalError

    def refuse(name, args, countdown=None):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(categories, "send_task", refuse)
    battle = answered_battle(prompt="Write a haiku about the sea")
    with django_capture_on_commit_callbacks(execute=True):
        vote_on(battle, choice="tie")
    assert Vote.objects.get(battle=battle).categories_pending  # kept for the next run
    assert votes_classify_pending() == 1
    assert not Vote.objects.get(battle=battle).categories_pending


def test_the_first_prompt_is_classified_by_rules_and_the_model(classifier):
    battle = answered_battle(prompt="Write a poem in Python comments: def poem(): pass\n"
                                    "class Verse: pass")
    result = battle_classify(battle)
    assert result.method == "rules+model"
    assert tags(battle) == {"coding", "creative_writing", "lang-en"}
    battle.refresh_from_db()
    assert battle.language == "en" and battle.classified_at is not None
    assert battle.classification_note == ""
    # Its call is in the ledger, entered from this thread (the test's transaction holds
    # SQLite's write lock: entered from another thread, it waited forever).
    assert ModelCall.objects.filter(ok=True).count() == 1
    asked = len(classifier.chat_requests)
    assert battle_classify(battle) is None  # once only (a redelivery)
    assert len(classifier.chat_requests) == asked


def test_a_classifier_over_its_providers_budget_is_not_called(classifier, settings):
    from arena.ratelimit import provider_budget

    settings.ARENA_PROVIDER_CALLS_PER_MINUTE = 1
    provider_budget(["Fakeprov"])  # the minute's one call is spent
    battle = answered_battle(prompt="Write a haiku about the sea, please, a short one")
    result = battle_classify(battle)
    assert result.method == "rules" and classifier.chat_requests == []
    assert tags(battle) == {"creative_writing", "lang-en"}
    battle.refresh_from_db()
    assert battle.classification_note.startswith(
        "the classifier's provider had no calls left this minute")


def test_without_the_classifier_model_the_rules_decide_and_the_battle_says_why(settings):
    settings.ARENA_CLASSIFIER_MODEL = "not-installed"
    battle = answered_battle(prompt="Solve 2x + 3 = 11 for x, please, step by step")
    battle_classify(battle)
    battle.refresh_from_db()
    assert tags(battle) == {"math", "lang-en"}
    assert "not-installed is not in the model registry" in battle.classification_note


def test_a_classification_that_ends_after_the_vote_reaches_the_vote(settings):
    settings.ARENA_CLASSIFIER_MODEL = ""
    battle = answered_battle(prompt="Write a limerick about a cat who codes", turns=2,
                             categories=CATEGORY_BITS["multi_turn"])
    vote_on(battle, choice="tie")
    battle_classify(battle)
    vote = Vote.objects.get(battle=battle)
    assert category_tags(vote.categories, vote.language) \
        == {"creative_writing", "multi_turn", "lang-en"}
    assert not vote.categories_pending


def test_a_follow_up_makes_the_battle_multi_turn():
    battle = answered_battle()
    assert "multi_turn" not in tags(battle)
    services.battle_follow_up(battle=battle, prompt="And in French?")
    assert "multi_turn" in tags(battle)


def test_export_writes_the_categories_that_rate_reads(tmp_path, settings):
    settings.ARENA_CLASSIFIER_MODEL = ""
    coding = answered_battle(prompt="```\nx = 1\n```\nWhat does this Python code do?")
    plain = answered_battle(prompt="What is the tallest mountain on Earth?")
    for battle in (coding, plain):
        battle_classify(battle)
        vote_on(Battle.objects.get(pk=battle.pk), choice="left_better")
    out = tmp_path / "votes.csv"
    call_command("export_votes", "--output", str(out), stderr=io.StringIO())
    rows = {r["battle_id"]: r for r in csv.DictReader(out.open())}
    assert rows[str(coding.pk)]["coding"] == "true"
    assert rows[str(plain.pk)]["coding"] == "false"
    assert rows[str(plain.pk)]["language"] == "en"
    assert {"math", "creative_writing", "hard_prompt", "multi_turn", "long_query"} \
        <= set(rows[str(plain.pk)])
    buffer = io.StringIO()
    call_command("rate", "--input", str(out), "--category", "coding", "--format", "json",
                 stdout=buffer)
    assert {r["model"] for r in json.loads(buffer.getvalue())} \
        == {coding.model_a_id, coding.model_b_id}


def test_demo_battles_are_classified_by_the_rules():
    from arena.services import models_sync
    from battles.demo import demo_seed

    models_sync()
    demo_seed(battles=60, seed=3)
    demo = Battle.objects.filter(is_demo=True)
    assert not demo.filter(classified_at__isnull=True).exists()
    for battle in demo.prefetch_related("turns"):
        first = battle.turns.all()[0].prompt
        expected = set(classify_by_rules(first).tags)
        if len(battle.turns.all()) > 1:
            expected.add("multi_turn")
        assert tags(battle) == expected
    assert any("coding" in tags(b) for b in demo)
    vote = Vote.objects.filter(battle__is_demo=True).select_related("battle").first()
    assert (vote.categories, vote.language, vote.model_a_id) == (
        vote.battle.categories, vote.battle.language, vote.battle.model_a_id)


def test_classify_battles_classifies_what_was_not(settings):
    settings.ARENA_CLASSIFIER_MODEL = ""
    old = [answered_battle(prompt="Write a SQL query in Python using sqlite3, the code please"),
           answered_battle(prompt="Why is the sky blue? Explain it for a child please")]
    done = answered_battle(prompt="Already done")
    Battle.objects.filter(pk=done.pk).update(classified_at=done.created_at)
    out = io.StringIO()
    call_command("classify_battles", stdout=out)
    assert out.getvalue().strip() == "classified 2 of 2 battles (2 by rules)"
    assert tags(old[0]) == {"coding", "lang-en"} and tags(old[1]) == {"lang-en"}
    assert tags(done) == set()

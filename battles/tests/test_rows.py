"""The vote's plain statements (battles.rows) read and store what the ORM would: each is run
beside the ORM's way on the same data and the results compared (SQLite here; CI runs them on
PostgreSQL, where the statements differ)."""

from datetime import UTC, datetime

import pytest
from django.forms.models import model_to_dict
from django.utils import timezone

from arena.steps import StepStatus
from battles import rows
from battles.models import Battle, Response, Slot, Thread, Vote

from .factories import AIModelFactory, BattleFactory, answered_battle

pytestmark = pytest.mark.django_db


def test_the_ballot_is_the_battle_and_its_models_as_the_orm_reads_them():
    model = AIModelFactory(aliases=["Quokka", "qk-2"], organization="Ünïcode & Co")
    battle = answered_battle(model_a=model, categories=0b1011, language="fr")
    ballot = rows.ballot_locked(battle.pk, battle.session_key)

    orm = Battle.objects.select_related("model_a", "model_b").get(pk=battle.pk)
    for name in ("id", "session_key", "thread_id", "model_a_id", "model_b_id",
                 "model_a_position", "categories", "language"):
        assert getattr(ballot.battle, name) == getattr(orm, name), name
    for side in ("model_a", "model_b"):
        for name in rows.MODEL_FIELDS:
            assert getattr(getattr(ballot.battle, side), name) == \
                getattr(getattr(orm, side), name), (side, name)
    assert (ballot.voted, ballot.unclassified) == (Vote.objects.filter(battle=orm).exists(),
                                                   orm.classified_at is None)
    assert rows.ballot_locked(battle.pk, "someone-else") is None

    Battle.objects.filter(pk=battle.pk).update(classified_at=timezone.now())
    Vote.objects.create(battle=battle, choice="tie", winner="tie", score_a=0.5, score_b=0.5,
                        **Vote.facts_of(battle))
    again = rows.ballot_locked(battle.pk, battle.session_key)
    assert (again.voted, again.unclassified) == (True, False)


def test_the_answers_are_the_responses_as_the_orm_reads_them():
    battle = answered_battle(turns=3, prompt="First, with 'quotes'")
    Response.objects.filter(turn__battle=battle, slot=Slot.B, turn__index=2).update(
        output_tokens=None, md_headers=2, md_lists=5, md_bold=1, status=StepStatus.FAILED)

    expected = [
        rows.Answer(r.turn.index, r.turn.prompt, r.slot, r.status, r.text, r.output_tokens,
                    r.md_headers, r.md_lists, r.md_bold)
        for r in Response.objects.filter(turn__battle=battle).select_related("turn")
        .order_by("turn__index", "slot")
    ]
    assert rows.answers(battle) == expected
    assert len(expected) == 6


def test_touching_a_battle_stores_what_an_orm_update_stores():
    plain, orm = BattleFactory(), BattleFactory()
    now = timezone.now()
    rows.touch(plain, now)
    Battle.objects.filter(pk=orm.pk).update(last_active_at=now)
    Thread.objects.filter(pk=orm.thread_id).update(last_active_at=now)

    for model, plain_pk, orm_pk in ((Battle, plain.pk, orm.pk),
                                    (Thread, plain.thread_id, orm.thread_id)):
        stored = dict(model.objects.filter(pk__in=[plain_pk, orm_pk])
                      .values_list("pk", "last_active_at"))
        assert stored[plain_pk] == stored[orm_pk] == now
    assert plain.last_active_at == now


def test_a_vote_inserted_plainly_is_the_vote_the_orm_saves():
    model_a, model_b = AIModelFactory(), AIModelFactory()
    battles = [answered_battle(model_a=model_a, model_b=model_b, categories=5, language="de")
               for _ in range(2)]
    when = datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)

    def vote(battle: Battle) -> Vote:
        return Vote(battle=battle, choice="left_better", winner="model_a", score_a=1.0,
                    score_b=0.0, voter="ip:0f1e", counts_for_rating=False,
                    exclusion_reason="names a model: «Quokka»", categories_pending=True,
                    created_at=when, tokens_a=1200, tokens_b=3, headers_a=1, lists_b=4,
                    bold_a=2, **Vote.facts_of(battle))

    inserted = rows.vote_insert(vote(battles[0]))
    vote(battles[1]).save()

    plain, saved = (model_to_dict(Vote.objects.get(battle=b), exclude=["id", "battle"])
                    for b in battles)
    assert plain == saved
    assert plain["created_at"] == when
    assert not inserted._state.adding
    assert Vote.objects.get(pk=inserted.pk).battle_id == battles[0].pk

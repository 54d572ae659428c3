"""Regenerate: both answers of the latest message written again before the vote, together;
the old answers kept apart and never shown nor counted."""

from __future__ import annotations

import itertools

import pytest

from arena.errors import RuleError
from arena.steps import StepStatus
from battles import rows, selectors, services
from battles.api.battles import battle_payload
from battles.models import Response, Slot, SupersededAnswer
from battles.steps import conversation_for
from battles.tests.factories import answered_battle, vote_on

OWNER = "session-of-owner"


def numbered_replies(fake):
    """Every chat the fake answers gets a new text: "take 1 …", "take 2 …"."""
    takes = itertools.count(1)
    fake.reply_text = lambda rec: f"take {next(takes)} for {rec.model}"


def finish(turn, **fields) -> None:
    """The turn's (new) answers written, as a worker would save them."""
    Response.objects.filter(turn=turn).update(status=StepStatus.DONE, **fields)


@pytest.mark.django_db(transaction=True)
def test_both_sides_are_asked_again_with_the_same_models_and_positions(
        step_sends, two_models, fake_openai):
    numbered_replies(fake_openai)
    battle, turn = services.battle_create(session_key=OWNER, prompt="Name a colour.")
    step_sends.run_sent()
    old = {r.slot: r for r in turn.responses.all()}

    services.battle_regenerate(battle=battle)
    assert len(step_sends.of("run_response")) == 4  # the first two, then both again
    step_sends.run_sent()

    battle.refresh_from_db()
    new = {r.slot: r for r in Response.objects.filter(turn=turn)}
    assert set(new) == {Slot.A, Slot.B}
    assert all(r.status == StepStatus.DONE for r in new.values())
    assert {r.id for r in new.values()}.isdisjoint(r.id for r in old.values())
    for slot in (Slot.A, Slot.B):
        assert new[slot].text != old[slot].text
        model = battle.model_in(slot).api_model
        assert new[slot].text.endswith(model) and old[slot].text.endswith(model)
    # The same conversation was sent again: the prompt alone, to each model once more.
    second = fake_openai.chat_requests[2:]
    assert sorted(r.model for r in second) == sorted(m.api_model for m in two_models)
    assert all(r.messages[-1]["content"] == "Name a colour." for r in second)
    kept = {s.slot: s for s in SupersededAnswer.objects.filter(turn=turn)}
    assert {s: k.text for s, k in kept.items()} == {s: r.text for s, r in old.items()}
    assert {k.round for k in kept.values()} == {1}
    turn.refresh_from_db()
    assert turn.regenerations == 1


@pytest.mark.django_db
class TestRegenerate:
    def test_only_the_shown_answers_reach_the_page_the_api_the_next_turn_and_the_vote(
            self, step_sends):
        battle = answered_battle(turns=2)
        Response.objects.filter(turn__battle=battle, turn__index=2).update(
            md_bold=9, output_tokens=500)
        last = battle.turns.get(index=2)
        services.battle_regenerate(battle=battle)
        finish(last, text="fresh", md_bold=0, output_tokens=7)

        view = selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))
        texts = [s.response.text for t in view.turns for s in t.sides]
        assert texts.count("fresh") == 2 and "answer a2" not in texts
        payload = str(battle_payload(view))
        assert "answer a2" not in payload and "answer b2" not in payload
        assert [a.text for a in rows.answers(battle)][2:] == ["fresh", "fresh"]
        assert conversation_for(battle.id, Slot.A, 3, "next")[3]["content"] == "fresh"

        vote = vote_on(battle, choice="tie")
        assert (vote.bold_a, vote.bold_b) == (0, 0)
        assert (vote.tokens_a, vote.tokens_b) == (3 + 7, 3 + 7)  # turn 1's and the new ones
        assert SupersededAnswer.objects.filter(turn=last).count() == 2

    def test_an_answer_regenerated_away_that_named_its_model_still_stops_the_vote_counting(
            self, step_sends):
        """The voter read it before pressing Regenerate: regenerating must not launder a
        leak (nor become a way to fish for one with a vote that still counts)."""
        battle = answered_battle()
        turn = battle.turns.get()
        Response.objects.filter(turn=turn, slot=Slot.A).update(
            text=f"As {battle.model_a.name}, I can tell you.")
        services.battle_regenerate(battle=battle)
        finish(turn, text="A neutral answer.")
        vote = vote_on(battle, choice="tie")
        assert not vote.counts_for_rating
        assert vote.exclusion_reason.startswith("the conversation names a model")

    def test_only_the_latest_message_is_written_again(self, step_sends):
        battle = answered_battle(turns=2)
        first = set(Response.objects.filter(turn__index=1).values_list("id", flat=True))
        services.battle_regenerate(battle=battle)
        assert set(Response.objects.filter(turn__index=1).values_list("id", flat=True)) == first
        assert not SupersededAnswer.objects.filter(turn__index=1).exists()

    @pytest.mark.parametrize("status", [StepStatus.FAILED, StepStatus.DONE])
    def test_a_failed_or_stopped_answer_can_be_regenerated(self, step_sends, status):
        battle = answered_battle()
        Response.objects.filter(slot=Slot.A).update(status=status, stopped=True,
                                                    error="The provider failed.")
        turn = services.battle_regenerate(battle=battle)
        kept = SupersededAnswer.objects.get(turn=turn, slot=Slot.A)
        assert kept.status == status and kept.stopped
        assert {r.status for r in turn.responses.all()} == {StepStatus.PENDING}

    def test_the_limit_per_message_is_a_setting(self, step_sends, settings):
        settings.ARENA_BATTLE_REGENERATIONS = 2
        battle = answered_battle()
        turn = battle.turns.get()
        for _ in range(2):
            services.battle_regenerate(battle=battle)
            finish(turn, text="again")
        with pytest.raises(RuleError) as err:
            services.battle_regenerate(battle=battle)
        assert err.value.message == services.REGENERATE_LIMIT.format(limit=2, plural="s")
        assert err.value.status == 409
        assert SupersededAnswer.objects.filter(turn=turn).count() == 4
        assert sorted(SupersededAnswer.objects.filter(turn=turn).values_list(
            "round", flat=True)) == [1, 1, 2, 2]

    def test_zero_turns_it_off(self, step_sends, settings):
        settings.ARENA_BATTLE_REGENERATIONS = 0
        battle = answered_battle()
        with pytest.raises(RuleError) as err:
            services.battle_regenerate(battle=battle)
        assert err.value.message == services.REGENERATE_OFF


@pytest.mark.django_db
class TestRegenerateRefusals:
    def _refused(self, battle) -> RuleError:
        before = set(Response.objects.filter(turn__battle=battle).values_list("id", flat=True))
        with pytest.raises(RuleError) as err:
            services.battle_regenerate(battle=battle)
        after = set(Response.objects.filter(turn__battle=battle).values_list("id", flat=True))
        assert after == before and not SupersededAnswer.objects.exists()
        return err.value

    def test_a_voted_battle_is_refused(self, step_sends):
        battle = answered_battle()
        vote_on(battle, choice="tie")
        err = self._refused(battle)
        assert (err.message, err.status) == (services.BATTLE_ALREADY_VOTED, 409)

    @pytest.mark.parametrize("status", [StepStatus.PENDING, StepStatus.RUNNING])
    def test_answers_still_being_written_are_refused(self, step_sends, status):
        battle = answered_battle()
        Response.objects.filter(slot=Slot.B).update(status=status)
        err = self._refused(battle)
        assert (err.message, err.status) == (services.REGENERATE_WHILE_WRITING, 409)


@pytest.mark.django_db
def test_the_page_offers_regenerate_only_while_it_can(client, step_sends, settings):
    settings.ARENA_BATTLE_REGENERATIONS = 1
    session = client.session
    session["visitor"] = True
    session.save()
    battle = answered_battle(session_key=session.session_key)
    page = client.get(f"/battle/{battle.id}/").content.decode()
    assert 'data-testid="regenerate"' in page

    swapped = client.post(f"/battle/{battle.id}/regenerate")
    assert swapped.status_code == 200
    html = swapped.content.decode()
    assert 'id="turn-1"' in html and 'data-status="pending"' in html
    assert "answer a1" not in html and 'data-testid="regenerate"' not in html
    for model in (battle.model_a, battle.model_b):
        assert model.name not in html and model.organization not in html  # still blind
    refused = client.post(f"/battle/{battle.id}/regenerate")
    assert refused.status_code == 409
    assert services.REGENERATE_WHILE_WRITING in refused.content.decode()

    finish(battle.turns.get(), text="new")
    page = client.get(f"/battle/{battle.id}/").content.decode()
    assert 'data-testid="regenerate"' not in page  # its one round is spent
    assert 'data-testid="regenerated-1"' in page
    assert client.post(f"/battle/{battle.id}/regenerate").status_code == 409
    assert client.post(f"/battle/{'0' * 8}-0000-4000-8000-{'0' * 12}/regenerate"
                       ).status_code == 404


@pytest.mark.django_db
def test_staff_find_the_superseded_answers_in_the_admin(admin_client, step_sends):
    battle = answered_battle()
    turn = services.battle_regenerate(battle=battle)
    page = admin_client.get(f"/admin/battles/turn/{turn.pk}/change/")
    assert page.status_code == 200
    assert "answer a1" in page.content.decode() and "answer b1" in page.content.decode()
    assert admin_client.get("/admin/battles/share/").status_code == 200

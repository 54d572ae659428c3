import random

import pytest
from django.db import IntegrityError, transaction

from arena.contests import voting
from arena.contests.leaks import leaked_identity
from arena.errors import RuleError
from arena.steps import StepStatus
from battles import services
from battles.models import (
    MAX_MESSAGES,
    Position,
    Slot,
    Vote,
    Winner,
)
from battles.selection import battle_pair_pick
from battles.tests.conftest import neutral_reply
from battles.tests.factories import (
    AIModelFactory,
    ResponseFactory,
    TurnFactory,
    answered_battle,
    vote_on,
)
from testkit.fake_providers import Behaviour, FakeOpenAIServer

OWNER = "session-of-owner"


@pytest.mark.django_db
class TestPromptRules:
    @pytest.mark.parametrize("prompt", ["", "   \n\t  "])
    def test_empty_or_whitespace_prompt_is_refused(self, prompt):
        with pytest.raises(RuleError) as err:
            services.battle_create(session_key=OWNER, prompt=prompt)
        assert err.value.message == services.PROMPT_EMPTY
        assert err.value.status == 400

    def test_prompt_over_the_limit_is_refused_naming_the_limit(self):
        with pytest.raises(RuleError) as err:
            services.battle_create(session_key=OWNER, prompt="x" * 30_001)
        assert "30,000" in err.value.message
        assert err.value.status == 422

    def test_fewer_than_two_available_models_gives_a_clear_message(self):
        AIModelFactory(status="deprecated")
        with pytest.raises(RuleError) as err:
            services.battle_create(session_key=OWNER, prompt="hello")
        assert err.value.message == services.NOT_ENOUGH_MODELS
        assert err.value.status == 503


@pytest.mark.django_db
class TestFollowUpAndVoteRules:
    def test_follow_up_is_refused_after_six_messages(self):
        battle = answered_battle(turns=MAX_MESSAGES)
        with pytest.raises(RuleError) as err:
            services.battle_follow_up(battle=battle, prompt="one more")
        assert err.value.message == services.MESSAGE_LIMIT_REACHED
        assert battle.turns.count() == MAX_MESSAGES

    def test_follow_up_is_refused_after_the_vote(self):
        battle = answered_battle()
        vote_on(battle, choice="tie")
        with pytest.raises(RuleError) as err:
            services.battle_follow_up(battle=battle, prompt="more")
        assert err.value.message == services.BATTLE_ALREADY_VOTED

    def test_only_the_owning_session_votes_and_the_rest_is_404(self):
        battle = answered_battle()
        owner, unknown = battle.session_key, "00000000-0000-0000-0000-000000000000"
        for battle_id, session_key in ((battle.pk, "someone-else"), (battle.pk, ""),
                                       ("not-a-uuid", owner), (unknown, owner)):
            with pytest.raises(RuleError) as err:
                services.battle_vote(battle_id=battle_id, session_key=session_key, choice="tie")
            assert (err.value.status, err.value.message) == (404, services.BATTLE_NOT_FOUND)
        assert not Vote.objects.exists()
        vote = services.battle_vote(battle_id=str(battle.pk), session_key=owner, choice="tie")
        assert vote.battle.model_a == battle.model_a  # the reveal comes with the vote

    def test_vote_is_refused_before_both_answers(self):
        battle = answered_battle()
        turn = TurnFactory(battle=battle, index=2)
        ResponseFactory(turn=turn, slot=Slot.A)
        ResponseFactory(turn=turn, slot=Slot.B, status=StepStatus.RUNNING, text="")
        with pytest.raises(RuleError) as err:
            vote_on(battle, choice="left_better")
        assert err.value.message == services.ANSWERS_NOT_READY
        assert not Vote.objects.filter(battle=battle).exists()

    def test_vote_is_refused_while_an_answer_has_failed(self):
        battle = answered_battle()
        response = battle.turns.get().responses.get(slot=Slot.B)
        response.status = StepStatus.FAILED
        response.save()
        with pytest.raises(RuleError) as err:
            vote_on(battle, choice="tie")
        assert err.value.message == services.ANSWER_FAILED

    def test_second_vote_is_refused_and_the_first_is_kept(self):
        battle = answered_battle()
        vote_on(battle, choice="left_better")
        with pytest.raises(RuleError) as err:
            vote_on(battle, choice="right_better")
        assert err.value.status == 409
        assert Vote.objects.get(battle=battle).choice == "left_better"

    def test_the_database_allows_one_vote_per_battle(self):
        battle = answered_battle()
        tie = {"choice": "tie", "winner": "tie", "score_a": .5, "score_b": .5,
               **Vote.facts_of(battle)}
        Vote.objects.create(battle=battle, **tie)
        with pytest.raises(IntegrityError), transaction.atomic():
            Vote.objects.create(battle=battle, **tie)

    def test_unknown_vote_is_refused(self):
        battle = answered_battle()
        with pytest.raises(RuleError) as err:
            vote_on(battle, choice="left")
        assert err.value.message == voting.INVALID_VOTE

    @pytest.mark.parametrize(
        ("a_position", "choice", "winner", "score_a", "score_b"),
        [
            (Position.LEFT, "left_better", Winner.MODEL_A, 1.0, 0.0),
            (Position.RIGHT, "left_better", Winner.MODEL_B, 0.0, 1.0),
            (Position.RIGHT, "right_better", Winner.MODEL_A, 1.0, 0.0),
            (Position.LEFT, "tie", Winner.TIE, 0.5, 0.5),
            (Position.RIGHT, "both_bad", Winner.BOTH_BAD, 0.25, 0.25),
        ],
    )
    def test_vote_scores_follow_seed_000(self, a_position, choice, winner, score_a, score_b):
        battle = answered_battle(model_a_position=a_position)
        vote = vote_on(battle, choice=choice)
        assert (vote.winner, vote.score_a, vote.score_b) == (winner, score_a, score_b)
        assert vote.counts_for_rating


@pytest.mark.django_db(transaction=True)
def test_votes_sent_at_once_on_one_battle_store_one_and_move_the_elo_once():
    """Eight sessions' requests for the same battle arrive together: the battle's row lock
    (or, where it slips, the one-vote constraint) lets exactly one through."""
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from django.db import connection

    from leaderboard.runs.online_elo import elo_applied

    battle = answered_battle()
    start = Barrier(8)

    def cast(choice: str) -> str:
        try:
            start.wait()
            vote_on(battle, choice=choice)
            return "stored"
        except RuleError as err:
            return err.message
        finally:
            connection.close()

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(cast, ["left_better", "right_better"] * 4))
    assert outcomes.count("stored") == 1
    assert outcomes.count(services.BATTLE_ALREADY_VOTED) == 7
    assert Vote.objects.filter(battle=battle).count() == 1
    assert elo_applied("text") == 1


@pytest.mark.django_db
class TestIdentityFilter:
    def test_vote_naming_a_model_is_kept_but_not_counted(self):
        battle = answered_battle()
        response = battle.turns.get().responses.get(slot=Slot.A)
        response.text = f"I am {battle.model_a.name}, made by {battle.model_a.organization}."
        response.save()
        vote = vote_on(battle, choice="left_better")
        assert not vote.counts_for_rating
        assert "names a model" in vote.exclusion_reason

    def test_identity_terms_match_whole_words_only(self):
        model = AIModelFactory(name="Qwen2.5 Coder", organization="Alibaba", slug="qwen-coder")
        assert leaked_identity(["I was trained by Alibaba Cloud"], [model]).lower() == "alibaba"
        assert leaked_identity(["I am qwen, a model"], [model]).lower() == "qwen"
        assert leaked_identity(["An unrelated answer about coders"], [model]) is None


@pytest.mark.django_db
class TestSelection:
    def test_two_different_models_uniformly(self):
        models = [AIModelFactory() for _ in range(4)]
        seen = set()
        rng = random.Random(1)
        for _ in range(200):
            a, b = battle_pair_pick(models, strategy="uniform", rng=rng)
            assert a.slug != b.slug
            seen.add(a.slug)
        assert seen == {m.slug for m in models}

    def test_fewer_votes_strategy_favours_new_models(self):
        veteran, other, newcomer = AIModelFactory(), AIModelFactory(), AIModelFactory()
        for _ in range(30):
            battle = answered_battle(model_a=veteran, model_b=other)
            vote_on(battle, choice="tie")
        rng = random.Random(3)
        picks = [m.slug for _ in range(600)
                 for m in battle_pair_pick([veteran, other, newcomer],
                                                   strategy="fewer_votes", rng=rng)]
        assert picks.count(newcomer.slug) > picks.count(veteran.slug)


@pytest.mark.django_db(transaction=True)
class TestGeneration:
    """The answers' steps run here as plain functions, in the order they were sent."""

    def test_both_sides_answer_and_each_model_sees_only_its_own_history(
        self, step_sends, two_models, fake_openai
    ):
        battle, _ = services.battle_create(session_key=OWNER, prompt="First question?")
        step_sends.run_sent()
        services.battle_follow_up(battle=battle, prompt="Second question?")
        step_sends.run_sent()

        turns = list(battle.turns.prefetch_related("responses"))
        assert all(r.status == StepStatus.DONE for t in turns for r in t.responses.all())
        first_answers = {r.slot: r.text for r in turns[0].responses.all()}
        api_model_of = {Slot.A: battle.model_a.api_model, Slot.B: battle.model_b.api_model}
        second_requests = [r for r in fake_openai.chat_requests if len(r.messages) > 2]
        assert len(second_requests) == 2
        for request in second_requests:
            slot = Slot.A if request.model == api_model_of[Slot.A] else Slot.B
            other = Slot.B if slot == Slot.A else Slot.A
            roles = [m["role"] for m in request.messages]
            assert roles == ["system", "user", "assistant", "user"]
            assistant = request.messages[2]["content"]
            assert assistant == first_answers[slot]
            assert first_answers[other] not in str(request.messages)
        response = turns[0].responses.get(slot=Slot.A)
        assert response.latency_ms is not None and response.output_tokens > 0

    def test_a_failed_side_shows_why_and_retry_regenerates_only_that_side(
        self, step_sends, two_models, fast_llm_retries
    ):
        alpha, beta = two_models
        # Beta gets its own provider, which answers every chat with a 500.
        broken = FakeOpenAIServer(default=Behaviour.status(500), api_key=None,
                                  reply_text=neutral_reply).start()
        try:
            beta.base_url = broken.base_url
            beta.save()
            battle, _ = services.battle_create(session_key=OWNER, prompt="Hello?")
            step_sends.run_sent()
            slot_of_beta = Slot.A if battle.model_a_id == beta.slug else Slot.B
            turn = battle.turns.get()
            failed = turn.responses.get(slot=slot_of_beta)
            kept = turn.responses.exclude(slot=slot_of_beta).get()
            assert failed.status == StepStatus.FAILED
            assert failed.error and broken.base_url not in failed.error
            assert len(broken.chat_requests) == 3  # the client's three attempts
            assert kept.status == StepStatus.DONE

            broken.default = Behaviour.ok()
            services.response_retry(battle=battle, position=battle.position_of(slot_of_beta))
            step_sends.run_sent()
        finally:
            broken.stop()
        failed.refresh_from_db()
        kept_again = turn.responses.exclude(slot=slot_of_beta).get()
        assert failed.status == StepStatus.DONE and failed.generation == 1
        assert kept_again.text == kept.text and kept_again.generation == 0


@pytest.mark.django_db
def test_informative_selection_pairs_the_models_the_board_knows_least_about(settings):
    """Two well-measured models far apart, two close and barely rated: the close pair wins."""
    from arena.models import AIModel
    from leaderboard.models import RunTrigger
    from leaderboard.runs import services as leaderboard_services
    from leaderboard.tests.factories import make_votes

    make_votes([("strong", "weak", "model_a", 300), ("weak", "strong", "model_a", 10),
                ("new-a", "strong", "model_b", 3), ("new-b", "weak", "model_a", 3)])
    leaderboard_services.ratings_run(trigger=RunTrigger.COMMAND, boards=["text"])
    models = list(AIModel.objects.filter(slug__in=["strong", "weak", "new-a", "new-b"]))
    rng = random.Random(5)
    pairs = [frozenset(m.slug for m in battle_pair_pick(models, strategy="informative",
                                                               rng=rng))
             for _ in range(400)]
    counts = {pair: pairs.count(pair) for pair in set(pairs)}
    assert max(counts, key=counts.get) == frozenset({"new-a", "new-b"})
    assert counts.get(frozenset({"strong", "weak"}), 0) > 0  # the floor keeps every pair

"""The debate state machine end to end: its steps run here as plain functions, in order
(:class:`testkit.steps.StepSends`), against the fake provider and the local evidence
store; pausing and cancelling a debate under way use a real Celery worker."""

from dataclasses import replace

import pytest

from arena.errors import RuleError
from arena.steps import StepStatus
from debates import services, verdicts
from debates.judging import MAX_JUDGE_TRIES
from debates.models import (
    Debate,
    DebateStatus,
    DebateStep,
    FactCheck,
    JudgeEvaluation,
    StepKind,
)
from debates.selectors import debate_view
from debates.speeches import SpeakerBrief, compact_own_words_messages, parse_compact
from debates.steps import EMPTY_SPEECH, turn_load, turn_work
from debates.tests.debate_support import (
    EXTRACT_MARK,
    FALSE_CLAIM,
    DebateScript,
    library,
    make_model,
    quiet_rating_runs,
    wait_debate,
    wait_for,
    worker_idle,
)
from testkit.fake_providers import Behaviour
from testkit.metrics import scraped_here, value
from testkit.steps import StepSends

# Bad replies that fail a judge in both orders: each try is a reply and the structured
# output's one re-ask (arena.llm.structured), three tries in each of the two orders.
EVERY_TRY = 2 * MAX_JUDGE_TRIES * 2


class DebateSetup(tuple):
    """``(script, models, topic, (first persona, second persona))``; ``sends``: the steps
    sent, to run here (None with a worker)."""

    sends: StepSends | None = None


def _setup(fake_openai, settings, monkeypatch, sends: StepSends | None) -> DebateSetup:  # noqa: ANN001
    quiet_rating_runs(monkeypatch)
    script = DebateScript()
    fake_openai.reply_text = script
    models = [make_model(fake_openai, slug) for slug in ("alpha-7b", "beta-3b", "gamma-1b")]
    settings.ARENA_DEBATE_JUDGE_MODEL = "gamma-1b"
    topic, first, second = library()
    setup = DebateSetup((script, models, topic, (first, second)))
    setup.sends = sends
    return setup


@pytest.fixture
def debate_setup(transactional_db, fake_openai, settings, monkeypatch, step_sends):
    return _setup(fake_openai, settings, monkeypatch, step_sends)


@pytest.fixture
def worker_setup(celery_worker, fake_openai, settings, monkeypatch):
    """For what needs a step under way: a debate runs on the worker meanwhile."""
    yield _setup(fake_openai, settings, monkeypatch, None)
    wait_for(worker_idle)


def finished(setup: DebateSetup, debate: Debate) -> Debate:
    """The debate once every step it sent (and they sent) has run."""
    setup.sends.run_sent()
    return Debate.objects.get(pk=debate.pk)


def start(setup, **kwargs):
    _, _, topic, (first, second) = setup
    values = {"session_key": "owner-session", "model_a": "alpha-7b", "model_b": "beta-3b",
              "topic_id": str(topic.pk), "persona_a": str(first.pk),
              "persona_b": str(second.pk), "rounds": 2, "word_limit": 60}
    return services.debate_create(**{**values, **kwargs})


class TestWholeDebate:
    def test_moderator_turns_fact_checks_and_judging_in_order(self, debate_setup):
        script, _, topic, _ = debate_setup
        debate = finished(debate_setup, start(debate_setup))
        assert debate.status == DebateStatus.COMPLETED, debate.error
        kinds = list(debate.steps.order_by("created_at").values_list("kind", "round",
                                                                      "position"))
        assert kinds == [
            ("moderator", 1, ""), ("turn", 1, "pro"), ("fact_check", 1, "pro"),
            ("turn", 1, "con"), ("fact_check", 1, "con"), ("moderator", 2, ""),
            ("turn", 2, "pro"), ("fact_check", 2, "pro"), ("turn", 2, "con"),
            ("fact_check", 2, "con"), ("judge", 0, "")]
        assert all(s.status == StepStatus.DONE for s in debate.steps.all())
        turns = list(debate.turns.order_by("round", "created_at"))
        assert [(t.round, t.position) for t in turns] == [(1, "pro"), (1, "con"), (2, "pro"),
                                                          (2, "con")]
        assert turns[0].speech.startswith("Speaker-pro-1 argues.")
        assert turns[0].reflection and turns[0].critique and not turns[0].tags_missing
        # The judge read the debate twice, in both orders; both agreed on pro.
        evaluations = list(JudgeEvaluation.objects.filter(debate=debate))
        assert sorted(e.order for e in evaluations) == ["con_first", "pro_first"]
        assert {e.judge_id for e in evaluations} == {"gamma-1b"}
        assert debate.ai_winner == "pro" and debate.ai_consensus is True
        assert debate.ai_outcome == debate.outcome_of("pro")
        # Every claim was verified against the evidence store: factuality 1.
        checks = FactCheck.objects.filter(turn__debate=debate)
        assert checks.count() == 4 and set(checks.values_list("verdict", flat=True)) == {
            "verified"}
        assert checks.first().evidence[0]["title"] == "Paris Agreement"
        assert debate.factuality == 1.0
        assert debate.tokens_a > 0 and debate.tokens_b > 0 and debate.tokens_judging > 0
        assert debate.completed_at is not None and debate.duration_ms > 0

    def test_each_debater_sees_the_debate_so_far_with_its_persona_and_position(
            self, debate_setup):
        script, _, _, (first, second) = debate_setup
        debate = finished(debate_setup, start(debate_setup))
        pro_persona = debate.persona_of("pro").name
        con_persona = debate.persona_of("con").name
        con_round_1 = next(p for p in script.prompts if "Your Position: CON" in p
                           and "Round: 1 of" in p)
        assert f"You are {con_persona}" in con_round_1
        assert "Speaker-pro-1 argues." in con_round_1  # the opponent's speech
        assert pro_persona != con_persona
        pro_round_2 = next(p for p in script.prompts if "Your Position: PRO" in p
                           and "Round: 2 of" in p)
        assert "Speaker-con-1 argues." in pro_round_2 and "Speaker-pro-1 argues." in pro_round_2

    def test_no_fact_checking_skips_the_checks(self, debate_setup):
        script, *_ = debate_setup
        debate = finished(debate_setup, start(debate_setup, rounds=1, fact_checking=False))
        assert debate.status == DebateStatus.COMPLETED
        assert not debate.steps.filter(kind=StepKind.FACT_CHECK).exists()
        assert not any(kind in ("extract", "verify") for kind, _ in script.seen)
        assert debate.factuality is None

    def test_an_over_long_speech_is_cut_and_a_tagless_reply_is_all_speech(self, debate_setup):
        script, *_ = debate_setup
        long_speech = " ".join(f"Sentence number {i} is here." for i in range(40))
        script.turn_replies = {"pro-1": f"<speech>{long_speech}</speech>",
                               "con-1": "I just talk without any tags. It is fine."}
        debate = finished(debate_setup, start(debate_setup, rounds=1, word_limit=50))
        pro, con = debate.turns.get(position="pro"), debate.turns.get(position="con")
        assert pro.cut_at_word_limit and len(pro.speech.split()) <= 50
        assert pro.speech.endswith("is here.")
        assert con.tags_missing and con.speech == "I just talk without any tags. It is fine."


class TestListing:
    def test_a_calibration_debate_on_a_library_topic_is_unlisted_unless_listed_is_true(
            self, debate_setup):
        # A calibration debate has a side told to argue badly: /debates/ shows it only when
        # asked to, as the crowd's calibration asks; a library topic alone does not list it.
        calibration = ("con", "false_claims", [FALSE_CLAIM])
        quiet = start(debate_setup, calibration=calibration)
        loud = start(debate_setup, calibration=calibration, listed=True)
        plain = start(debate_setup)
        assert (quiet.is_listed, loud.is_listed, plain.is_listed) == (False, True, True)
        assert quiet.handicapped == loud.handicapped == "con"


class TestStrictMode:
    def test_a_false_claim_sends_the_turn_back_once_and_keeps_the_first_version(
            self, debate_setup):
        script, *_ = debate_setup
        script.claims_of = {"pro-1": FALSE_CLAIM}
        debate = finished(debate_setup, start(debate_setup, rounds=1, strict_mode=True))
        assert debate.status == DebateStatus.COMPLETED, debate.error
        pro = debate.turns.get(position="pro")
        assert pro.revised and FALSE_CLAIM in pro.first_speech
        assert FALSE_CLAIM not in pro.speech and "sky often looks blue" in pro.speech
        assert FactCheck.objects.filter(turn=pro, revision=0, verdict="false").count() == 1
        assert FactCheck.objects.filter(turn=pro, revision=1, verdict="verified").count() == 1
        assert [k for k, _ in script.seen].count("revise") == 1
        assert debate.steps.filter(kind=StepKind.TURN, position="pro").count() == 2
        # Factuality counts the version that stands.
        assert debate.factuality == 1.0 and pro.factuality == 1.0

    def test_without_strict_mode_the_false_claim_stands_and_counts(self, debate_setup):
        script, *_ = debate_setup
        script.claims_of = {"pro-1": FALSE_CLAIM}
        debate = finished(debate_setup, start(debate_setup, rounds=1))
        pro = debate.turns.get(position="pro")
        assert not pro.revised and pro.factuality == 0.0
        assert debate.factuality == 0.5  # one false, one verified


class TestJudging:
    def test_disagreement_between_the_orders_is_a_tie(self, debate_setup):
        script, *_ = debate_setup
        script.judge_winners = {"gamma-1b-api": {"pro_first": "pro", "con_first": "con"}}
        debate = finished(debate_setup, start(debate_setup, rounds=1))
        assert debate.ai_winner == "tie" and debate.ai_consensus is False
        assert not debate.tiebreaker_used

    def test_a_tiebreaker_judge_decides_a_disagreement(self, debate_setup, settings,
                                                       fake_openai):
        script, *_ = debate_setup
        make_model(fake_openai, "delta-2b")
        settings.ARENA_DEBATE_TIEBREAKER_MODEL = "delta-2b"
        script.judge_winners = {"gamma-1b-api": {"pro_first": "pro", "con_first": "con"},
                                "delta-2b-api": {"pro_first": "con", "con_first": "con"}}
        debate = finished(debate_setup, start(debate_setup, rounds=1))
        assert debate.ai_winner == "con" and debate.tiebreaker_used
        roles = set(debate.evaluations.values_list("role", flat=True))
        assert roles == {"primary", "tiebreaker"}

    def test_a_failing_judge_is_retried_then_a_fallback_judge_decides(self, debate_setup,
                                                                      fake_openai):
        script, *_ = debate_setup
        make_model(fake_openai, "delta-2b")  # the fallback: another model, not a debater
        script.judge_failures = {"gamma-1b-api": EVERY_TRY}
        script.judge_winners = {"delta-2b-api": {"pro_first": "con", "con_first": "con"}}
        debate = finished(debate_setup, start(debate_setup, rounds=1))
        primary = debate.evaluations.filter(role="primary")
        assert primary.count() == 2 and all(e.attempts == 3 and not e.winner for e in primary)
        fallback = debate.evaluations.filter(role="fallback")
        assert fallback.count() == 2 and debate.ai_winner == "con"
        assert {e.judge_id for e in fallback} == {"delta-2b"}

    def test_no_judge_at_all_asks_for_a_review_that_an_admin_settles(self, debate_setup,
                                                                     fake_openai):
        script, *_ = debate_setup
        make_model(fake_openai, "delta-2b")  # the fallback fails too
        script.judge_failures = {"gamma-1b-api": EVERY_TRY, "delta-2b-api": EVERY_TRY}
        debate = finished(debate_setup, start(debate_setup, rounds=1))
        assert debate.status == DebateStatus.COMPLETED
        assert debate.needs_review and not debate.ai_winner
        verdicts.debate_review_settle(debate_id=debate.pk, winner="con")
        debate.refresh_from_db()
        assert debate.ai_winner == "con" and not debate.needs_review
        with pytest.raises(RuleError) as raised:
            verdicts.debate_review_settle(debate_id=debate.pk, winner="pro")
        assert raised.value.status == 409

    def test_no_debater_judges_its_own_debate_the_crowd_decides(self, debate_setup,
                                                                fake_openai):
        """With only the two debaters available (the embedded arena's two local models) a
        debater declared itself the winner; now there is no AI verdict, each side's claims
        are checked by the other side's model, and wagers are given back."""
        from arena.models import AIModel
        from debates.crowd import debate_vote, points_of

        AIModel.objects.filter(pk="gamma-1b").update(api_key_env="ARENA_TEST_UNSET_KEY")
        debate = start(debate_setup, rounds=1)
        assert debate.judge_model_id is None
        debate_setup.sends.run_sent(until=debate.turns.exists)
        debate_vote(debate_id=debate.pk, session_key="bettor", choice="pro", wager=200)
        debate = finished(debate_setup, debate)
        assert debate.status == DebateStatus.COMPLETED and not debate.needs_review
        assert not debate.ai_winner and not JudgeEvaluation.objects.filter(debate=debate)
        assert points_of("bettor") == 1000  # the stake came back
        # Whose speech each claim extraction read (its speaker's mark), and who read it.
        checked = {(r.model, "pro" if "Speaker-pro" in r.messages[-1]["content"] else "con")
                   for r in fake_openai.chat_requests
                   if EXTRACT_MARK in r.messages[-1]["content"]}
        speaker = {debate.model_of(side).api_model: side for side in ("pro", "con")}
        assert {side for _model, side in checked} == {"pro", "con"}
        assert all(speaker[model] != side for model, side in checked)
        page = debate_view(debate=debate, session_key="bettor")
        assert page.judge_name is None


def test_the_operators_count_started_completed_and_failed_debates(debate_setup, fake_openai):
    def counted(event: str) -> float:
        return value(scraped_here(), "arena_debates_total", event=event)

    before = {event: counted(event) for event in ("started", "completed", "failed")}
    assert finished(debate_setup, start(debate_setup, rounds=1)).status == \
        DebateStatus.COMPLETED
    fake_openai.script(Behaviour.status(400, "This model is switched off."))
    assert finished(debate_setup, start(debate_setup, rounds=1)).status == DebateStatus.FAILED
    grew = {event: counted(event) - before[event] for event in before}
    assert grew == {"started": 2, "completed": 1, "failed": 1}


class TestFailuresAndControls:
    def test_a_provider_failure_fails_the_debate_with_the_reason_and_keeps_what_was_said(
            self, debate_setup, fake_openai):
        # The first speech is written; the second call is refused (400: not retried).
        fake_openai.script(Behaviour.ok(), Behaviour.status(400, "This model is switched off."))
        debate = finished(debate_setup, start(debate_setup, rounds=1, fact_checking=False))
        assert debate.status == DebateStatus.FAILED
        assert debate.error.startswith("Turn 1 con: ")
        assert [(t.round, t.position) for t in debate.turns.all()] == [(1, "pro")]
        failed = debate.steps.get(status=StepStatus.FAILED)
        assert failed.error and failed.kind == StepKind.TURN and failed.position == "con"
        assert not debate.steps.filter(kind=StepKind.JUDGE).exists()

    def test_pause_stops_after_the_current_step_and_resume_goes_on(self, worker_setup):
        debate = start(worker_setup, rounds=1, fact_checking=False)
        services.debate_pause(debate_id=debate.pk, session_key="owner-session")
        wait_for(worker_idle)
        paused = Debate.objects.get(pk=debate.pk)
        assert paused.status == DebateStatus.PAUSED
        steps_while_paused = paused.steps.count()
        assert not paused.steps.filter(status=StepStatus.RUNNING).exists()
        services.debate_resume(debate_id=debate.pk, session_key="owner-session")
        debate = wait_debate(debate.pk)
        assert debate.status == DebateStatus.COMPLETED
        assert debate.steps.count() > steps_while_paused

    def test_only_the_owner_controls_and_a_cancelled_debate_keeps_its_turns(self,
                                                                            worker_setup):
        debate = start(worker_setup, rounds=1, fact_checking=False)
        with pytest.raises(RuleError) as raised:
            services.debate_pause(debate_id=debate.pk, session_key="someone-else")
        assert raised.value.status == 403
        services.debate_cancel(debate_id=debate.pk, session_key="owner-session")
        wait_for(worker_idle)
        debate.refresh_from_db()
        assert debate.status == DebateStatus.CANCELLED and "Cancelled" in debate.error
        assert not debate.steps.filter(status=StepStatus.PENDING).exists()
        with pytest.raises(RuleError) as raised:
            services.debate_resume(debate_id=debate.pk, session_key="owner-session")
        assert raised.value.status == 409

    def test_a_redelivered_step_writes_nothing_twice(self, debate_setup):
        """The job of a finished step runs again (a redelivery): no second turn, no second
        next step."""
        from debates.steps import debate_step_run

        debate = finished(debate_setup, start(debate_setup, rounds=1, fact_checking=False))
        steps = debate.steps.count()
        for step in debate.steps.all():
            debate_step_run(step_id=str(step.pk), generation=step.generation)
        assert debate.steps.count() == steps
        assert debate.turns.count() == 2


class TestConfiguration:
    def test_an_invalid_configuration_names_every_problem(self, debate_setup):
        with pytest.raises(RuleError) as raised:
            start(debate_setup, rounds=9, word_limit=5, model_a="nope", strict_mode=True,
                  fact_checking=False, persona_b="Nobody")
        message = raised.value.message
        assert raised.value.status == 400
        for part in ("rounds must be 1 to 5", "word_limit must be 50 to 500",
                     "'nope' is not a known model", "strict mode needs fact-checking",
                     "'Nobody' is not an active persona"):
            assert part in message

    def test_a_proposed_motion_is_used_once_and_waits_for_approval(self, debate_setup):
        debate = start(debate_setup, topic_id=None, motion="  This house would <b>ban</b> "
                       "homework\x00 in primary schools  ")
        topic = debate.topic
        assert topic.motion == "This house would ban homework in primary schools"
        assert not topic.is_approved and topic.proposed_by == "owner-session"
        assert not topic.is_public

    def test_the_view_hides_the_models_until_the_viewer_votes_or_reveals(self, debate_setup):
        from debates.crowd import crowd_reveal

        debate = finished(debate_setup, start(debate_setup, rounds=1, fact_checking=False))
        view = debate_view(debate=debate, session_key="viewer")
        assert all(s.model_name is None for s in view.sides.values())
        assert view.judge_name is None
        crowd_reveal(debate_id=debate.pk, session_key="viewer")
        view = debate_view(debate=debate, session_key="viewer")
        assert {s.model_id for s in view.sides.values()} == {"alpha-7b", "beta-3b"}
        assert view.viewer_vote is None and view.revealed


def test_a_debate_fact_checked_through_tavily(debate_setup, settings, monkeypatch):
    from testkit.fake_tavily import FakeTavilyServer

    corpus = [{"title": "UN climate", "url": "https://unfccc.int/paris",
               "content": "The Paris Agreement was adopted in 2015 in Paris."}]
    with FakeTavilyServer(corpus=corpus) as tavily:
        settings.ARENA_FACTCHECK_SEARCH = "tavily"
        settings.TAVILY_BASE_URL = tavily.base_url
        monkeypatch.setenv("TAVILY_API_KEY", tavily.api_key)
        tavily.script(500)  # the first search fails: that claim is unverifiable, not lost
        debate = finished(debate_setup, start(debate_setup, rounds=1))
    checks = FactCheck.objects.filter(turn__debate=debate).order_by("created_at")
    assert debate.status == DebateStatus.COMPLETED
    assert [c.backend for c in checks] == ["tavily", "tavily"]
    assert sorted(c.verdict for c in checks) == ["unverifiable", "verified"]
    failed = next(c for c in checks if c.verdict == "unverifiable")
    assert "Tavily failed (500)" in failed.explanation
    assert next(c for c in checks if c.verdict == "verified").evidence[0]["url"] == \
        "https://unfccc.int/paris"
    assert len(tavily.requests) == 2


@pytest.mark.django_db
def test_a_paused_debates_step_waits_unclaimed_and_runs_once_resumed(step_sends):
    """The check before the claim: a step sent while its debate is paused is not started."""
    from debates.steps import debate_step_run
    from debates.tests.debate_support import debate_row

    debate = debate_row(rounds=2, session_key="owner")
    step = DebateStep.objects.create(debate=debate, kind=StepKind.MODERATOR, round=2)
    services.debate_pause(debate_id=debate.pk, session_key="owner")
    debate_step_run(step_id=str(step.pk), generation=0)
    step.refresh_from_db()
    assert step.status == StepStatus.PENDING and step.lease_expires_at is None
    services.debate_resume(debate_id=debate.pk, session_key="owner")
    debate_step_run(step_id=str(step.pk), generation=0)
    step.refresh_from_db()
    assert step.status == StepStatus.DONE and step.note.startswith("Round 2 of 2.")
    assert debate.steps.filter(kind=StepKind.TURN, round=2, position="pro").exists()


class TestIdentityLeaks:
    def test_a_motion_that_names_a_debater_keeps_the_crowd_result_off_the_board(
            self, debate_setup):
        """The whole debate is read (issue 33): here the motion names a model's maker, and
        no speech does."""
        from debates.boards import counted_debates
        from debates.crowd import debate_vote

        debate = finished(debate_setup, start(debate_setup, topic_id=None, rounds=1,
                                              motion="Alphacorp builds the most honest "
                                                     "assistant"))
        assert debate.status == DebateStatus.COMPLETED, debate.error
        assert list(debate.turns.values_list("names_model", flat=True)) == ["Alphacorp"] * 2
        debate_vote(debate_id=debate.pk, session_key="a-viewer", choice="pro")
        debate.refresh_from_db()
        assert debate.crowd_outcome and not counted_debates("crowd_outcome").filter(
            pk=debate.pk).exists()


class TestSmallModelTurn:
    """An embedded small model's compact turn can be nothing but what it was told, taken off
    whole as an echo: the debate failed on "an empty speech". It is asked once more, in its own
    words and without the opponent's speech it copied."""

    def turn_job(self, setup):
        debate = finished(setup, start(setup, rounds=1))
        step = DebateStep.objects.get(debate=debate, kind="turn", round=1, position="pro")
        opening = SpeakerBrief(name="Ada", description="", background="", traits=[],
                               speaking_style="", motion=debate.topic.motion, position="pro",
                               round=1, rounds=1, word_limit=debate.word_limit)
        return replace(turn_load(step, debate), compact=True,
                       retry=compact_own_words_messages(opening, None))

    @staticmethod
    def echo(job) -> str:
        """The request's last line, word for word: all of it an echo."""
        told = job.messages[-1]["content"].strip().splitlines()[-1]
        assert parse_compact(told, prompt=[m["content"] for m in job.messages]).speech == ""
        return told

    def test_a_reply_that_only_repeats_its_request_is_asked_for_once_more(self, debate_setup,
                                                                          fake_openai):
        job = self.turn_job(debate_setup)
        replies = iter([self.echo(job), "Cars make towns loud and slow."])
        fake_openai.reply_text = lambda rec: next(replies)
        before = len(fake_openai.chat_requests)
        assert turn_work(job).error == ""
        asked = fake_openai.chat_requests[before:]
        assert len(asked) == 2
        again = asked[1].messages[-1]["content"]
        assert "in your own words" in again.lower() and "opponent" not in again.lower()
        assert job.messages[-1]["content"] not in str(asked[1].messages)

    def test_twice_nothing_of_its_own_fails_the_turn_saying_so(self, debate_setup, fake_openai):
        job = self.turn_job(debate_setup)
        told = self.echo(job)
        fake_openai.reply_text = lambda rec: told
        before = len(fake_openai.chat_requests)
        assert turn_work(job).error == EMPTY_SPEECH
        assert len(fake_openai.chat_requests) - before == 2

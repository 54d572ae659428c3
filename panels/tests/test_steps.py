"""Panel steps run here as plain functions (no worker): the sends are recorded and run in
order (:class:`testkit.steps.StepSends`). A worker dying mid-panel loses nothing; the
question model writes, checks and refines the question through steps of its own."""

from datetime import timedelta

import pytest
from django.utils import timezone

from arena.errors import RuleError
from arena.steps import RESTARTED_NOTICE, StepStatus, step_requeue_stale
from panels import services, steps
from panels.models import (
    ClarificationRound,
    PanelAnswer,
    PanelJudgement,
    PanelStatus,
    QuestionStep,
    RoundPhase,
)
from panels.tests.panel_support import panel_setup

QUESTION = "What is 2+2?"


@pytest.fixture
def script(transactional_db, fake_openai, fake_anthropic, settings, monkeypatch, step_sends):
    """The scripted models; what the services send is recorded in ``step_sends``."""
    script, _ = panel_setup(fake_openai, fake_anthropic, settings, monkeypatch)
    return script


def asked(*servers) -> int:
    return sum(len(server.chat_requests) for server in servers)


def test_a_panel_runs_to_its_verdict_and_a_redelivered_answer_asks_nothing_again(
        script, step_sends, fake_openai, fake_anthropic):
    panel = services.panel_create(question=QUESTION)
    assert step_sends.run_sent() == 6  # three answers, three judgements
    panel.refresh_from_db()
    assert panel.status == PanelStatus.DONE and panel.verdict["judges_counted"] == 3
    calls = asked(fake_openai, fake_anthropic)

    answer_id, generation = step_sends.of("run_panel_answer")[-1]
    steps.panel_answer_run(answer_id=answer_id, generation=generation)  # redelivered
    assert asked(fake_openai, fake_anthropic) == calls
    assert PanelJudgement.objects.filter(panel=panel).count() == 3
    assert step_sends.run_sent() == 0


def test_a_stuck_step_is_restarted_and_the_old_job_cannot_overwrite(script, step_sends):
    panel = services.panel_create(question=QUESTION)
    answers = step_sends.of("run_panel_answer")
    for answer_id, generation in answers[1:]:
        steps.panel_answer_run(answer_id=answer_id, generation=generation)
    stuck_id, old_generation = answers[0]
    PanelAnswer.objects.filter(pk=stuck_id).update(
        status=StepStatus.RUNNING, lease_expires_at=timezone.now() - timedelta(hours=1))

    assert step_requeue_stale() == 1
    assert step_sends.of("run_panel_answer")[-1] == [stuck_id, old_generation + 1]
    steps.panel_answer_run(answer_id=stuck_id, generation=old_generation)  # the slow one
    assert PanelAnswer.objects.get(pk=stuck_id).status == StepStatus.PENDING
    step_sends.run_sent()
    assert PanelAnswer.objects.get(pk=stuck_id).status == StepStatus.DONE
    panel.refresh_from_db()
    assert panel.status == PanelStatus.DONE and panel.verdict["judges_counted"] == 3
    assert step_requeue_stale() == 0


def test_each_judge_gets_its_own_order(script, step_sends):
    services.panel_create(question=QUESTION)
    for answer_id, generation in step_sends.of("run_panel_answer"):
        steps.panel_answer_run(answer_id=answer_id, generation=generation)
    orders = [tuple(j.shown_order) for j in PanelJudgement.objects.all()]
    assert len(orders) == 3 and all(sorted(o) == ["alpha-7b", "beta-3b", "gamma-1b"]
                                    for o in orders)


def test_the_page_says_when_a_step_is_written_again(script, step_sends, client):
    panel = services.panel_create(question=QUESTION)
    stuck_id, _ = step_sends.of("run_panel_answer")[0]
    PanelAnswer.objects.filter(pk=stuck_id).update(
        status=StepStatus.RUNNING, lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert step_requeue_stale() == 1
    progress = client.get(f"/panel/{panel.id}/progress").content.decode()
    assert RESTARTED_NOTICE in progress


class TestClarification:
    def test_a_clear_question_goes_straight_to_the_models(self, script, step_sends):
        panel = services.panel_create(question=QUESTION, clarify=True)
        step_sends.run_sent()
        panel.refresh_from_db()
        assert panel.status == PanelStatus.DONE
        (round_,) = panel.rounds.all()
        assert round_.is_clear and round_.reply == "CLEAR" and panel.question == QUESTION

    def test_rounds_end_after_five_and_the_last_refinement_is_asked(self, script, step_sends):
        script.clarify_replies = [f"Which unit do you mean ({i})?" for i in range(1, 7)]
        script.refined = [f"What is 2+2 in unit {i}?" for i in range(1, 7)]
        panel = services.panel_create(question=QUESTION, clarify=True, session_key="me")
        for index in range(1, 6):
            step_sends.run_sent()
            assert ClarificationRound.objects.get(panel=panel, index=index).phase \
                == RoundPhase.ASKING
            services.panel_clarification_answer(panel=panel, answer=f"unit {index}",
                                                session_key="me")
        step_sends.run_sent()
        panel.refresh_from_db()
        rounds = list(panel.rounds.all())
        assert [r.index for r in rounds] == [1, 2, 3, 4, 5]
        assert [r.person_answer for r in rounds] == [f"unit {i}" for i in range(1, 6)]
        assert rounds[1].question == "What is 2+2 in unit 1?"
        assert panel.question == "What is 2+2 in unit 5?" and panel.original_question == QUESTION
        assert panel.status == PanelStatus.DONE and len(script.clarify_replies) == 1
        assert QuestionStep.objects.filter(panel=panel, status=StepStatus.DONE).count() == 10

    def test_the_asker_can_skip_and_nobody_else_can_answer(self, script, step_sends):
        script.clarify_replies = ["Do you mean in base ten?"]
        panel = services.panel_create(question=QUESTION, clarify=True, session_key="me")
        step_sends.run_sent()
        with pytest.raises(RuleError, match=services.NOT_THE_ASKER):
            services.panel_clarification_answer(panel=panel, answer="yes", session_key="other")
        with pytest.raises(RuleError, match=services.CLARIFICATION_ANSWER_EMPTY):
            services.panel_clarification_answer(panel=panel, answer=" ", session_key="me")
        services.panel_clarification_skip(panel=panel, session_key="me")
        step_sends.run_sent()
        panel.refresh_from_db()
        assert panel.status == PanelStatus.DONE and panel.question == QUESTION
        assert panel.rounds.get().skipped
        with pytest.raises(RuleError, match=services.NOT_WAITING_FOR_ANSWERS):
            services.panel_clarification_skip(panel=panel, session_key="me")

    def test_a_check_whose_worker_died_is_started_over_by_the_platform_sweep(
            self, script, step_sends):
        script.clarify_replies = ["Do you mean in base ten?"]
        panel = services.panel_create(question=QUESTION, clarify=True, session_key="me")
        (check_id, generation), = step_sends.of("run_question_step")
        QuestionStep.objects.filter(pk=check_id).update(
            status=StepStatus.RUNNING, lease_expires_at=timezone.now() - timedelta(seconds=1))
        assert step_requeue_stale() == 1
        assert step_sends.of("run_question_step")[-1] == [check_id, generation + 1]
        step_sends.run_sent()  # the old job finds its step started over; the new one asks
        round_ = panel.rounds.get()
        assert round_.phase == RoundPhase.ASKING and round_.reply == "Do you mean in base ten?"
        assert QuestionStep.objects.get(pk=check_id).restarts == 1

    def test_an_unavailable_question_model_is_a_clear_error(self, script, settings):
        settings.ARENA_PANEL_QUESTION_MODEL = "no-such-model"
        with pytest.raises(RuleError, match="not in the model registry"):
            services.panel_create(question=QUESTION, clarify=True)


def test_auto_question_is_written_then_asked(script, step_sends):
    panel = services.panel_create(auto=True)
    assert panel.status == PanelStatus.GENERATING and panel.question == ""
    step_sends.run_sent()
    panel.refresh_from_db()
    assert panel.status == PanelStatus.DONE
    assert panel.question == script.generated and panel.question_source == "generated"
    assert panel.question_model_id == "alpha-7b"

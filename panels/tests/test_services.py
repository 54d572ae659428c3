"""The panel state machine end to end against the fake providers: its steps run here as
plain functions, in order (:class:`testkit.steps.StepSends`); that the answers are asked
at once is seen on a real Celery worker."""

import threading

import pytest

from arena.errors import RuleError
from arena.steps import StepStatus
from panels import services
from panels.models import (
    PanelAnswer,
    PanelJudgement,
    PanelOutcome,
    PanelStatus,
)
from panels.selectors import panel_payload, panel_view, panel_visible
from panels.tests.panel_support import (
    PanelScript,
    failing,
    labels_in,
    panel_setup,
    self_first,
    wait_finished,
)

QUESTION = "What is 2+2?"


@pytest.fixture
def panel_models(transactional_db, fake_openai, fake_anthropic, settings, monkeypatch):
    return panel_setup(fake_openai, fake_anthropic, settings, monkeypatch)


def run(sends, question=QUESTION, **kwargs):  # noqa: ANN001 - the recorded sends
    """Ask, then run every step the panel sends until it is finished."""
    panel = services.panel_create(question=question, **kwargs)
    sends.run_sent()
    panel.refresh_from_db()
    return panel


class TestFullPanel:
    def test_every_model_answers_and_judges_and_the_average_rank_decides(self, step_sends,
                                                                          panel_models):
        script, _ = panel_models
        panel = run(step_sends)
        assert panel.status == PanelStatus.DONE, panel.error
        assert sorted(panel.participants) == ["alpha-7b", "beta-3b", "gamma-1b"]
        assert PanelAnswer.objects.filter(panel=panel, status=StepStatus.DONE).count() == 3
        judgements = list(PanelJudgement.objects.filter(panel=panel))
        assert len(judgements) == 3 and all(j.is_valid and j.attempts == 1 for j in judgements)
        standings = panel.verdict["standings"]
        assert [(s["model"], s["average_rank"]) for s in standings] == [
            ("alpha-7b", 1.0), ("beta-3b", 2.0), ("gamma-1b", 3.0)]
        assert panel.verdict["kendall_w"] == 1.0
        assert panel.verdict["self_ranks"] == {"alpha-7b": 1, "beta-3b": 2, "gamma-1b": 3}

    def test_judges_see_their_own_order_under_neutral_labels_only(self, step_sends,
                                                                  panel_models):
        script, models = panel_models
        panel = run(step_sends)
        by_judge = {j.judge_id.split("-")[0]: j for j in panel.judgements.all()}
        assert len(script.judge_prompts) == 3
        for judge, messages in script.judge_prompts:
            shown = by_judge[judge].shown_order
            labels = labels_in(messages)
            assert [labels[label] for label in sorted(labels)] == [s.split("-")[0] for s in shown]
            prompt = next(m["content"] for m in messages if m["role"] == "user").lower()
            for model in models:
                for term in (model.slug, model.name.lower(), model.api_model,
                             model.organization.lower()):
                    assert term not in prompt

    def test_the_payload_has_answers_rankings_and_verdict(self, step_sends, panel_models):
        panel = run(step_sends)
        data = panel_payload(panel_view(panel=panel_visible(panel_id=panel.id)))
        assert data["status"] == "done" and data["question"] == QUESTION
        assert {a["model_id"] for a in data["answers"]} == {"alpha-7b", "beta-3b", "gamma-1b"}
        ranking = data["rankings"][0]
        assert ranking["valid"] and len(ranking["shown_order"]) == 3
        assert ranking["ranking"] == ["alpha-7b", "beta-3b", "gamma-1b"]
        verdict = data["verdict"]
        assert verdict["standings"][0]["model_id"] == "alpha-7b"
        assert verdict["standings"][0]["ranks"] == {"alpha-7b": 1, "beta-3b": 1, "gamma-1b": 1}
        assert verdict["judges_counted"] == 3 and verdict["judges_discarded"] == 0

    def test_an_answer_that_names_its_model_is_kept_and_noted(self, step_sends, panel_models):
        script, _ = panel_models
        script.answers["beta"] = "As Beta Model, I say: Marker-ateb says four."
        panel = run(step_sends)
        notes = dict(panel.answers.values_list("model_id", "names_model"))
        assert notes == {"alpha-7b": "", "beta-3b": "Beta Model", "gamma-1b": ""}
        assert panel.status == PanelStatus.DONE

    def test_a_chosen_subset_only(self, step_sends, panel_models):
        panel = run(step_sends, models=["beta-3b", "gamma-1b"])
        assert panel.status == PanelStatus.DONE
        assert [s["model"] for s in panel.verdict["standings"]] == ["beta-3b", "gamma-1b"]


class TestFailures:
    def test_a_failing_provider_is_skipped_and_reported(self, step_sends, panel_models,
                                                        fake_anthropic):
        failing(fake_anthropic)
        panel = run(step_sends)
        assert panel.status == PanelStatus.DONE
        gamma = PanelAnswer.objects.get(panel=panel, model_id="gamma-1b")
        assert gamma.status == StepStatus.FAILED and "HTTP 400" in gamma.error
        assert sorted(panel.judgements.values_list("judge_id", flat=True)) == [
            "alpha-7b", "beta-3b"]
        assert [s["model"] for s in panel.verdict["standings"]] == ["alpha-7b", "beta-3b"]

    def test_fewer_than_two_answers_aborts_with_a_clear_message(self, step_sends, panel_models,
                                                                 fake_anthropic):
        failing(fake_anthropic)
        panel = run(step_sends, models=["alpha-7b", "gamma-1b"])
        assert panel.status == PanelStatus.FAILED
        assert panel.error.startswith("Only 1 of 2 models answered")
        assert "Gamma Model: The model provider rejected the request (HTTP 400)." in panel.error
        assert not panel.judgements.exists() and panel.verdict is None

    def test_fewer_than_two_available_models_refuses_to_start(self, panel_models,
                                                             fake_anthropic):
        fake_anthropic.stop()
        with pytest.raises(RuleError) as caught:
            services.panel_create(question=QUESTION, models=["alpha-7b", "gamma-1b"])
        assert caught.value.status == 503
        assert "1 is available now" in caught.value.message
        assert "Gamma Model: endpoint unreachable" in caught.value.message

    def test_unknown_models_and_empty_questions(self, panel_models):
        with pytest.raises(RuleError, match="Unknown model id\\(s\\): nope"):
            services.panel_create(question=QUESTION, models=["alpha-7b", "nope"])
        with pytest.raises(RuleError, match=services.QUESTION_EMPTY):
            services.panel_create(question="   ")

    def test_blank_model_ids_are_no_ids(self, panel_models):
        chosen, _ = services.panel_participants(models=["", "  "])
        assert len(chosen) >= 2 and (chosen, []) == services.panel_participants()


class TestInvalidRankings:
    @pytest.mark.parametrize("bad", [
        '{"results": ["A", "A", "B"]}',
        '{"results": ["A", "B"]}',
        '{"results": ["A", "B", "F"]}',
        "I liked them all.",
    ])
    def test_an_invalid_ranking_is_retried_once_with_the_error_stated(
            self, transactional_db, step_sends, fake_openai, fake_anthropic, settings,
            monkeypatch, bad):
        script = PanelScript(judge_replies={"beta": [bad]})
        panel_setup(fake_openai, fake_anthropic, settings, monkeypatch, script)
        panel = run(step_sends)
        beta = PanelJudgement.objects.get(panel=panel, judge_id="beta-3b")
        assert beta.is_valid and beta.attempts == 2 and beta.replies[0] == bad
        retry = [m for j, m in script.judge_prompts if j == "beta"][-1]
        retry = [m for m in retry if m["role"] != "system"]
        assert [m["role"] for m in retry] == ["user", "assistant", "user"]
        assert retry[1]["content"] == bad and "cannot be used" in retry[2]["content"]
        assert panel.verdict["judges_counted"] == 3

    def test_a_second_invalid_reply_is_discarded_with_the_reason(
            self, transactional_db, step_sends, fake_openai, fake_anthropic, settings,
            monkeypatch):
        script = PanelScript(judge_replies={"gamma": ['{"results": ["A", "A", "B"]}',
                                                      '{"results": [1, 2]}']})
        panel_setup(fake_openai, fake_anthropic, settings, monkeypatch, script)
        panel = run(step_sends)
        gamma = PanelJudgement.objects.get(panel=panel, judge_id="gamma-1b")
        assert not gamma.is_valid and gamma.attempts == 2 and gamma.status == StepStatus.DONE
        assert gamma.discard_reason == (
            "Not a valid ranking after 2 attempts: Response C is missing: every response "
            "must be ranked")
        assert panel.status == PanelStatus.DONE and panel.verdict["judges_counted"] == 2
        assert "gamma-1b" not in panel.verdict["standings"][0]["ranks"]

    def test_no_valid_ranking_at_all_fails_the_panel_but_keeps_everything(
            self, transactional_db, step_sends, fake_openai, fake_anthropic, settings,
            monkeypatch):
        junk = ["no idea", "still no idea"]
        script = PanelScript(judge_replies=dict.fromkeys(("alpha", "beta", "gamma"), junk))
        panel_setup(fake_openai, fake_anthropic, settings, monkeypatch, script)
        panel = run(step_sends)
        assert panel.status == PanelStatus.FAILED and panel.error == services.NO_VALID_RANKINGS
        assert panel.answers.filter(status=StepStatus.DONE).count() == 3
        assert all(j.discard_reason for j in panel.judgements.all())
        assert not PanelOutcome.objects.filter(panel=panel).exists()


def test_self_votes_are_shown_and_can_be_excluded(transactional_db, step_sends, fake_openai,
                                                  fake_anthropic, settings, monkeypatch):
    preference = ["gamma", "beta", "alpha"]
    script = PanelScript(preference=preference, judge_replies={
        judge: [lambda labels, judge=judge: self_first(labels, judge, preference)]
        for judge in ("alpha", "beta", "gamma")})
    panel_setup(fake_openai, fake_anthropic, settings, monkeypatch, script)
    panel = run(step_sends)
    assert panel.verdict["self_ranks"] == {"alpha-7b": 1, "beta-3b": 1, "gamma-1b": 1}
    with_self = [(s["model"], round(s["average_rank"], 2)) for s in panel.verdict["standings"]]
    assert with_self == [("gamma-1b", 1.67), ("beta-3b", 2.0), ("alpha-7b", 2.33)]
    without = panel.verdict["standings_without_self_votes"]
    assert [(s["model"], s["average_rank"], s["judges"]) for s in without] == [
        ("gamma-1b", 1.0, 2), ("beta-3b", 1.5, 2), ("alpha-7b", 2.0, 2)]


def test_answers_are_asked_concurrently(celery_worker, fake_openai, fake_anthropic, settings,
                                        monkeypatch):
    """No answer is sent until all three questions have arrived: asked one by one, the
    barrier would break and every answer fail."""
    script, _ = panel_setup(fake_openai, fake_anthropic, settings, monkeypatch)
    barrier = threading.Barrier(3, timeout=15)

    def reply(rec):
        text = script(rec)
        if text.startswith("Marker-"):
            barrier.wait()
        return text

    fake_openai.reply_text = fake_anthropic.reply_text = reply
    panel = wait_finished(services.panel_create(question=QUESTION).id)
    assert panel.status == PanelStatus.DONE and not barrier.broken


def test_an_answer_cut_at_the_length_limit_says_so_on_the_page_and_in_the_api(step_sends,
                                                                               panel_models):
    """The panel showed a local model's answer stopped mid-word at its 256 tokens without a
    word of it."""
    from django.test import Client

    from arena.models import AIModel

    AIModel.objects.filter(pk="beta-3b").update(max_tokens=3)
    panel = run(step_sends)
    cut = PanelAnswer.objects.get(panel=panel, model_id="beta-3b")
    assert cut.cut_at_limit and cut.output_tokens == 3
    assert not PanelAnswer.objects.get(panel=panel, model_id="alpha-7b").cut_at_limit
    data = panel_payload(panel_view(panel=panel_visible(panel_id=panel.id)))
    assert {a["model_id"]: a["cut_at_limit"] for a in data["answers"]}["beta-3b"] is True
    page = Client().get(f"/panel/{panel.id}/").content.decode()
    assert 'data-testid="cut-beta-3b"' in page and "Stopped at the length limit (3 tokens)" in page
    assert 'data-testid="cut-alpha-7b"' not in page

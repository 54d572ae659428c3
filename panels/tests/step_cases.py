"""Panel mode's step models for the platform's lifecycle test (:class:`StepCase`): each is
made at the point where the panel waits for it alone."""

from __future__ import annotations

from arena.models import AIModel, ProviderKind
from arena.steps import StepStatus
from panels.models import (
    ClarificationRound,
    Panel,
    PanelAnswer,
    PanelJudgement,
    PanelStatus,
    QuestionStep,
    QuestionStepKind,
    RoundPhase,
)
from panels.steps import (
    ANSWER,
    JUDGEMENT,
    QUESTION,
    panel_answer_run,
    panel_judgement_run,
    question_step_run,
)
from testkit.steps import StepCase

SLUGS = ["case-alpha", "case-beta", "case-gamma"]


def _panel(status: str) -> Panel:
    for slug in SLUGS:
        AIModel.objects.get_or_create(slug=slug, defaults={
            "name": slug, "api_model": slug, "provider": "P",
            "provider_kind": ProviderKind.OPENAI})
    return Panel.objects.create(question="What is 2+2?", status=status, participants=SLUGS,
                                question_model_id=SLUGS[0])


def _answered(panel: Panel, slugs: list[str]) -> None:
    for slug in slugs:
        PanelAnswer.objects.create(panel=panel, model_id=slug, status=StepStatus.DONE,
                                   text=f"{slug} says four.")


def last_answer() -> PanelAnswer:
    panel = _panel(PanelStatus.ANSWERING)
    _answered(panel, SLUGS[:2])
    return PanelAnswer.objects.create(panel=panel, model_id=SLUGS[2])


def judging_without_it(answer: PanelAnswer) -> None:
    """Two answers are enough: the two models that answered judge them."""
    panel = Panel.objects.get(pk=answer.panel_id)
    assert panel.status == PanelStatus.JUDGING
    assert sorted(panel.judgements.values_list("judge_id", flat=True)) == SLUGS[:2]


def last_judgement() -> PanelJudgement:
    panel = _panel(PanelStatus.JUDGING)
    _answered(panel, SLUGS)
    for slug in SLUGS[:2]:
        PanelJudgement.objects.create(panel=panel, judge_id=slug, shown_order=SLUGS,
                                      status=StepStatus.DONE, is_valid=True, ranking=SLUGS,
                                      attempts=1)
    return PanelJudgement.objects.create(panel=panel, judge_id=SLUGS[2], shown_order=SLUGS)


def verdict_without_it(judgement: PanelJudgement) -> None:
    panel = Panel.objects.get(pk=judgement.panel_id)
    assert panel.status == PanelStatus.DONE and panel.verdict["judges_counted"] == 2


def question_check() -> QuestionStep:
    panel = _panel(PanelStatus.CLARIFYING)
    round_ = ClarificationRound.objects.create(panel=panel, index=1, question=panel.question)
    return QuestionStep.objects.create(panel=panel, round=round_, kind=QuestionStepKind.CHECK)


def asked_as_it_stands(step: QuestionStep) -> None:
    """Clarification is a help, not a gate: a failed check sends the question as it is."""
    round_ = ClarificationRound.objects.get(pk=step.round_id)
    assert round_.phase == RoundPhase.DONE and round_.error == step.error
    panel = Panel.objects.get(pk=step.panel_id)
    assert panel.status == PanelStatus.ANSWERING and panel.answers.count() == 3


CASES = {
    PanelAnswer: StepCase(
        work=ANSWER, make=last_answer, moved_on=judging_without_it,
        run=lambda pk, generation: panel_answer_run(answer_id=pk, generation=generation)),
    PanelJudgement: StepCase(
        work=JUDGEMENT, make=last_judgement, moved_on=verdict_without_it,
        run=lambda pk, generation: panel_judgement_run(judgement_id=pk,
                                                       generation=generation)),
    QuestionStep: StepCase(
        work=QUESTION, make=question_check, moved_on=asked_as_it_stands,
        run=lambda pk, generation: question_step_run(step_id=pk, generation=generation)),
}

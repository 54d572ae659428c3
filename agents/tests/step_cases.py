"""Voice battles' step model for the platform's lifecycle test (:class:`StepCase`)."""

from __future__ import annotations

from agents.models import (
    AgentConversation,
    BattleStatus,
    ConversationStatus,
    EvaluationStage,
    StageKind,
)
from agents.steps import STAGE, evaluation_stage_run
from agents.tests.voice_support import echo_agents, make_battle
from testkit.steps import StepCase


def transcript_after_the_vote() -> EvaluationStage:
    """A voted battle's call, measured, whose transcript is the stage left to run."""
    battle = make_battle("owner", echo_agents())
    battle.status = BattleStatus.VOTED
    battle.save(update_fields=["status"])
    call = AgentConversation.objects.create(
        battle=battle, agent_label="a", agent_config=battle.config_a, scenario=battle.scenario,
        status=ConversationStatus.DONE)
    EvaluationStage.objects.create(conversation=call, kind=StageKind.LATENCY, status="done")
    return EvaluationStage.objects.create(conversation=call, kind=StageKind.TRANSCRIPT)


def judged_without_it(stage: EvaluationStage) -> None:
    """The rest of the evaluation goes on: the judge reads the call's own turns."""
    assert EvaluationStage.objects.filter(conversation_id=stage.conversation_id,
                                          kind=StageKind.JUDGE).exists()


CASES = {EvaluationStage: StepCase(
    work=STAGE, make=transcript_after_the_vote, moved_on=judged_without_it,
    run=lambda pk, generation: evaluation_stage_run(stage_id=pk, generation=generation))}

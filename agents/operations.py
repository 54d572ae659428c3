"""What the operations page counts of voice battles: the calls (seconds long), the stages of
their evaluation (platform steps) and the votes."""

from agents.models import AgentConversation, AgentVote, ConversationStatus, EvaluationStage
from arena.operations import Operations, Votes, Work

OPERATIONS = Operations(
    work=(Work("calls", AgentConversation, duration="duration_seconds", to_ms=1000.0,
               done=(ConversationStatus.DONE,), failed=(ConversationStatus.FAILED,)),
          Work("evaluation stages", EvaluationStage)),
    votes=Votes(AgentVote),
)

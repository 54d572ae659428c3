"""What the operations page counts of debates: whole debates (a cancelled one is neither
completed nor failed), their steps, and the crowd's votes (a reveal is not a vote)."""

from django.db.models import Q

from arena.operations import Operations, Votes, Work
from debates.models import CrowdChoice, CrowdVote, Debate, DebateStatus, DebateStep

OPERATIONS = Operations(
    work=(Work("debates", Debate, duration="duration_ms", done=(DebateStatus.COMPLETED,),
               failed=(DebateStatus.FAILED,)),
          Work("steps", DebateStep)),
    votes=Votes(CrowdVote, where=~Q(choice=CrowdChoice.REVEALED)),
)

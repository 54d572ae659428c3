"""What the operations page counts of text battles: the answers (platform steps) and the
votes."""

from arena.operations import Operations, Votes, Work
from battles.models import Response, Vote

OPERATIONS = Operations(
    work=(Work("answers", Response, at="turn__created_at"),),
    votes=Votes(Vote),
)

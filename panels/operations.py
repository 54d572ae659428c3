"""What the operations page counts of panels: whole panels, and the answers and judgements
(platform steps) they are made of. Panels take no votes."""

from arena.operations import Operations, Work
from panels.models import Panel, PanelAnswer, PanelJudgement, PanelStatus

OPERATIONS = Operations(work=(
    # A panel records no duration of its own; its steps do.
    Work("panels", Panel, duration=None, done=(PanelStatus.DONE,), failed=(PanelStatus.FAILED,)),
    Work("answers", PanelAnswer, at="panel__created_at"),
    Work("judgements", PanelJudgement, at="panel__created_at"),
))

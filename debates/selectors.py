"""Reads of debate mode: lists, one debate as a viewer may see it, the form's choices.

Blind means blind: a debate's models are named only to a viewer who voted on it or chose to
reveal them (which forfeits the vote); everyone else sees personas and positions. The
debater who judged, when no other model could, is not named either.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from arena.inputs import parse_uuid
from arena.modes import Figure
from arena.steps import StepStatus
from debates.crowd import crowd_tally, points_of, wagers_open
from debates.models import (
    CrowdChoice,
    CrowdVote,
    Debate,
    DebateStatus,
    DebateStep,
    DebateTurn,
    FactCheck,
    JudgeEvaluation,
    Persona,
    StepKind,
    Topic,
)

LIST_LIMIT = 50
NO_CLAIMS = "The fact-checker found no checkable factual claim in this speech."


def debate_visible(*, debate_id) -> Debate | None:
    """A debate anyone with its link may see (unlisted ones too); None if unknown."""
    pk = parse_uuid(debate_id)
    if pk is None:
        return None
    return Debate.objects.select_related(
        "topic", "model_a", "model_b", "persona_a", "persona_b", "judge_model").filter(
        pk=pk).first()


def debate_streaming_steps(*, debate: Debate) -> list[DebateStep]:
    return list(debate.steps.filter(kind=StepKind.TURN, status=StepStatus.RUNNING))


def debate_list(*, category: str = "", model: str = "", status: str = "",
                session_key: str | None = None, limit: int = LIST_LIMIT) -> QuerySet[Debate]:
    """Listed debates, newest first. A model filter matches only debates this viewer has
    already voted on or revealed: on any other it would tell who debated before the vote."""
    debates = Debate.objects.filter(is_listed=True).select_related(
        "topic", "persona_a", "persona_b")
    if category:
        debates = debates.filter(topic__category__iexact=category)
    if status:
        debates = debates.filter(status=status)
    if model:
        seen = CrowdVote.objects.filter(session_key=session_key or "-").values("debate_id")
        debates = debates.filter(Q(model_a_id=model) | Q(model_b_id=model), pk__in=seen)
    return debates.annotate(turn_count=Count("turns"))[:limit]


def categories() -> list[str]:
    return sorted(set(Topic.objects.filter(is_approved=True, retired_at__isnull=True)
                      .values_list("category", flat=True)))


def form_choices() -> dict:
    from arena.selectors import model_list_available

    return {
        "models": model_list_available(),
        "topics": list(Topic.objects.filter(is_approved=True, retired_at__isnull=True)
                       .order_by("category", "motion")),
        "personas": list(Persona.objects.filter(is_active=True)),
    }


@dataclass
class Side:
    position: str
    persona: Persona
    model_name: str | None  # None while the viewer has not voted or revealed
    model_id: str | None
    tokens: int
    cost_usd: float


@dataclass
class TurnView:
    turn: DebateTurn
    checks: list[FactCheck]
    first_checks: list[FactCheck]  # of the version strict mode rejected
    check_note: str = ""  # why the fact-check has no claims, once it ran


@dataclass
class DebateView:
    debate: Debate
    sides: dict[str, Side]
    rounds: list[dict]  # {"round", "moderator", "turns": [TurnView]}
    evaluations: list[JudgeEvaluation]
    writing: list[DebateStep]  # turns being written now
    current: DebateStep | None
    viewer_vote: CrowdVote | None
    revealed: bool
    tally: dict[str, int]
    wagers_open: bool
    points: int | None
    is_owner: bool

    @property
    def has_speech(self) -> bool:
        return any(r["turns"] for r in self.rounds)

    @property
    def judge_name(self) -> str | None:
        """Named only once the viewer sees the debaters too (a judge may be one of them)."""
        judge = self.debate.judge_model
        return judge.name if judge is not None and self.revealed else None


def debate_view(*, debate: Debate, session_key: str | None) -> DebateView:
    vote = (CrowdVote.objects.filter(debate=debate, session_key=session_key).first()
            if session_key else None)
    revealed = vote is not None
    sides = {}
    for position in ("pro", "con"):
        side = debate.side_of(position)
        model = debate.model_of(position)
        sides[position] = Side(
            position=position, persona=debate.persona_of(position),
            model_name=model.name if revealed else None,
            model_id=model.slug if revealed else None,
            tokens=debate.tokens_a if side == "a" else debate.tokens_b,
            cost_usd=debate.cost_a if side == "a" else debate.cost_b)
    steps = list(debate.steps.all())
    checks: dict = {}
    for check in FactCheck.objects.filter(turn__debate=debate):
        checks.setdefault((check.turn_id, check.revision), []).append(check)
    rounds = []
    turns = {(t.round, t.position): t for t in debate.turns.all()}
    check_notes = {(s.round, s.position, s.revision): s.note or NO_CLAIMS for s in steps
                   if s.kind == StepKind.FACT_CHECK and s.status == StepStatus.DONE}
    for number in range(1, debate.rounds + 1):
        moderator = next((s.note for s in steps if s.kind == StepKind.MODERATOR
                          and s.round == number and s.status == StepStatus.DONE), "")
        views = []
        for position in ("pro", "con"):
            turn = turns.get((number, position))
            if turn is not None:
                current = 1 if turn.revised else 0
                views.append(TurnView(turn, checks.get((turn.pk, current), []),
                                      checks.get((turn.pk, 0), []) if turn.revised else [],
                                      check_notes.get((number, position, current), "")))
        if moderator or views:
            rounds.append({"round": number, "moderator": moderator, "turns": views})
    pending = [s for s in steps if s.status in (StepStatus.PENDING, StepStatus.RUNNING)]
    return DebateView(
        debate=debate, sides=sides, rounds=rounds,
        evaluations=list(debate.evaluations.all()),
        writing=[s for s in pending if s.kind == StepKind.TURN
                 and s.status == StepStatus.RUNNING],
        current=pending[-1] if pending else None,
        viewer_vote=vote if vote is not None and vote.choice != CrowdChoice.REVEALED else None,
        revealed=revealed, tally=crowd_tally(debate), wagers_open=wagers_open(debate),
        points=points_of(session_key) if session_key else None,
        is_owner=bool(session_key) and session_key == debate.session_key,
    )


def home_figures() -> list[Figure]:
    done = Debate.objects.filter(status=DebateStatus.COMPLETED).count()
    return [Figure("debates judged", done, "/debates/"),
            Figure("topics", Topic.objects.filter(is_approved=True,
                                                  retired_at__isnull=True).count())]

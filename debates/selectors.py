"""Reads of debate mode: lists, one debate as a viewer may see it, the form's choices.

Blind means blind: a debate's models are named only to a viewer who voted on it or chose to
reveal them (which forfeits the vote); everyone else sees personas and positions. The
debater who judged, when no other model could, is not named either, and no figure of a side
is shown (tokens, cost, milliseconds: with the models' public prices, 2.8e-05 USD for 239
tokens named the one model whose price fits).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from django.db import connection
from django.db.models import Count, Q

from arena.inputs import parse_uuid
from arena.modes import Figure
from arena.queries import column_name, table_name
from arena.selectors import model_list_available
from arena.steps import StepStatus
from debates.crowd import points_of, wagers_open
from debates.majority import crowd_tally
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
    Position,
    StepKind,
    Topic,
)
from debates.progress import Progress, progress_of

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
                session_key: str | None = None, limit: int = LIST_LIMIT) -> list[Debate]:
    """Listed debates, newest first, each with its ``motion``, ``category``, the ``pro`` and
    ``con`` personas' names and its ``turn_count`` (the rest of a debate loads on access).
    A model filter matches only debates this viewer has already voted on or revealed: on any
    other it would tell who debated before the vote.

    One plain statement per combination of filters, written once per process: the ORM's
    version (three joins and a count grouped over every column) took 3 ms of CPU to build,
    more than the database spent on it, on every read of the list."""
    params: list = []
    if category:
        params.append(category)
    if status:
        params.append(status)
    if model:
        params += [model, model, session_key or "-"]
    return list(Debate.objects.raw(
        _list_sql(connection.vendor, bool(category), bool(status), bool(model)),
        [*params, limit]))


@cache
def _list_sql(vendor: str, category: bool, status: bool, model: bool) -> str:  # noqa: ARG001
    def d(field: str) -> str:
        return f"d.{column_name(Debate, field)}"

    def named(alias: str) -> str:
        return f"{alias}.{column_name(Persona, 'name')}"

    persona = table_name(Persona)
    pro_is_a = f"{d('model_a_position')} = '{Position.PRO}'"
    where = [d("is_listed")]
    if category:
        where.append(f"LOWER(t.{column_name(Topic, 'category')}) = LOWER(%s)")
    if status:
        where.append(f"{d('status')} = %s")
    if model:
        where.append(
            f"({d('model_a')} = %s OR {d('model_b')} = %s) AND {d('id')} IN (SELECT "
            f"{column_name(CrowdVote, 'debate')} FROM {table_name(CrowdVote)} WHERE "
            f"{column_name(CrowdVote, 'session_key')} = %s)")
    return (
        f"SELECT {d('id')}, {d('status')}, {d('created_at')}, "
        f"t.{column_name(Topic, 'motion')} AS motion, "
        f"t.{column_name(Topic, 'category')} AS category, "
        f"CASE WHEN {pro_is_a} THEN {named('pa')} ELSE {named('pb')} END AS pro, "
        f"CASE WHEN {pro_is_a} THEN {named('pb')} ELSE {named('pa')} END AS con, "
        f"(SELECT COUNT(*) FROM {table_name(DebateTurn)} n "
        f"WHERE n.{column_name(DebateTurn, 'debate')} = {d('id')}) AS turn_count "
        f"FROM {table_name(Debate)} d "
        f"JOIN {table_name(Topic)} t ON t.{column_name(Topic, 'id')} = {d('topic')} "
        f"JOIN {persona} pa ON pa.{column_name(Persona, 'id')} = {d('persona_a')} "
        f"JOIN {persona} pb ON pb.{column_name(Persona, 'id')} = {d('persona_b')} "
        f"WHERE {' AND '.join(where)} ORDER BY {d('created_at')} DESC LIMIT %s")


def categories() -> list[str]:
    return sorted(set(Topic.objects.filter(is_approved=True, retired_at__isnull=True)
                      .values_list("category", flat=True)))


def form_choices() -> dict:
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
    tokens: int | None  # None while the viewer has not voted or revealed
    cost_usd: float | None


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
    progress: Progress  # seed 004's currentRound and currentSpeaker
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
    def names_model(self) -> bool:
        """A speech named a model (with the motion and the speeches before it)."""
        return any(t.turn.names_model for r in self.rounds for t in r["turns"])

    @property
    def judge_name(self) -> str | None:
        """Named only once the viewer sees the debaters too (a judge may be one of them)."""
        judge = self.debate.judge_model
        return judge.name if judge is not None and self.revealed else None

    @property
    def payout_reason(self) -> str:
        """Why the viewer's wager paid what it did."""
        vote = self.viewer_vote
        if vote is None or not vote.wager or vote.payout is None:
            return ""
        return payout_reason(self.debate, vote)

    @property
    def footnotes(self) -> list[str]:
        """The debate's totals under it: usage only once the models are named (a price turns
        a cost into a name), factuality and time for everyone."""
        debate, notes = self.debate, []
        if self.revealed:
            notes += [f"Tokens: {debate.total_tokens:,}", f"cost ${debate.total_cost:.4f}"]
        if debate.factuality is not None:
            notes.append(f"factuality of the debate {debate.factuality:.2f}")
        if debate.duration_ms:
            ms = debate.duration_ms
            notes.append(f"{ms:,} ms in all" if ms < 1000 else f"{ms / 1000:,.0f} s in all")
        return notes


def payout_reason(debate: Debate, vote: CrowdVote) -> str:
    """A wager's payout in words: parimutuel on the AI verdict (:mod:`debates.crowd`)."""
    stakes = list(debate.votes.filter(wager__gt=0).values_list("choice", "wager"))
    pool = sum(wager for _choice, wager in stakes)
    winner = debate.ai_winner
    if not winner:
        return "There is no AI verdict, so every stake was given back."
    called = sum(wager for choice, wager in stakes if choice == winner)
    verdict = winner.upper()
    if not called:
        return f"The judge said {verdict} and nobody called it, so every stake was given back."
    if vote.choice != winner:
        return (f"The judge said {verdict}: your stake joined the pool of {pool:,} points "
                "shared by those who called it.")
    if called == pool:
        return (f"The judge said {verdict}, as you did, but every stake was on {verdict}: "
                "there were no other stakes to win, so each one came back as it was.")
    return (f"The judge said {verdict}, as you did: the pool of {pool:,} points is shared "
            f"among those who called it, in proportion to their stakes ({called:,} points "
            f"were on {verdict}).")


def debate_view(*, debate: Debate, session_key: str | None) -> DebateView:
    """One debate as this viewer may see it, section by section: the two sides (their
    models named only once the viewer voted or revealed), the rounds of speeches with their
    fact-checks, the judges' evaluations, the steps under way, and the crowd's part."""
    vote = (CrowdVote.objects.filter(debate=debate, session_key=session_key).first()
            if session_key else None)
    revealed = vote is not None
    steps = list(debate.steps.all())
    pending = [s for s in steps if s.status in (StepStatus.PENDING, StepStatus.RUNNING)]
    return DebateView(
        debate=debate, sides=_sides(debate, revealed=revealed), rounds=_rounds(debate, steps),
        evaluations=list(debate.evaluations.all()),
        # An ended debate writes nothing more (a cancelled one's last call is left to end).
        writing=[] if debate.is_finished else [
            s for s in pending if s.kind == StepKind.TURN and s.status == StepStatus.RUNNING],
        current=pending[-1] if pending and not debate.is_finished else None,
        progress=progress_of(debate, steps),
        viewer_vote=vote if vote is not None and vote.choice != CrowdChoice.REVEALED else None,
        revealed=revealed, tally=crowd_tally(debate), wagers_open=wagers_open(debate),
        points=points_of(session_key) if session_key else None,
        is_owner=bool(session_key) and session_key == debate.session_key,
    )


def _sides(debate: Debate, *, revealed: bool) -> dict[str, Side]:
    sides = {}
    for position in ("pro", "con"):
        side = debate.side_of(position)
        model = debate.model_of(position)
        sides[position] = Side(
            position=position, persona=debate.persona_of(position),
            model_name=model.name if revealed else None,
            model_id=model.slug if revealed else None,
            tokens=(debate.tokens_a if side == "a" else debate.tokens_b) if revealed else None,
            cost_usd=(debate.cost_a if side == "a" else debate.cost_b) if revealed else None)
    return sides


def _rounds(debate: Debate, steps: list[DebateStep]) -> list[dict]:
    """Each round with a moderator's note or a speech: the note, and each speech with the
    fact-checks of its shown version (and of the first, when strict mode had it revised)."""
    checks: dict = {}
    for check in FactCheck.objects.filter(turn__debate=debate):
        checks.setdefault((check.turn_id, check.revision), []).append(check)
    turns = {(t.round, t.position): t for t in debate.turns.all()}
    check_notes = {(s.round, s.position, s.revision): s.note or NO_CLAIMS for s in steps
                   if s.kind == StepKind.FACT_CHECK and s.status == StepStatus.DONE}
    rounds = []
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
    return rounds


def home_figures() -> list[Figure]:
    done = Debate.objects.filter(status=DebateStatus.COMPLETED).count()
    return [Figure("debates judged", done, "/debates/"),
            Figure("topics", Topic.objects.filter(is_approved=True,
                                                  retired_at__isnull=True).count())]


def debate_outcomes_since(*, since) -> tuple[int, int]:
    """(ended, failed): debates started since then that completed or failed (a cancelled one
    is a person's choice, neither), for the debate-failure alert (debates.alerts)."""
    counts = Debate.objects.filter(
        created_at__gte=since, status__in=(DebateStatus.COMPLETED, DebateStatus.FAILED),
    ).order_by().aggregate(ended=Count("id"), failed=Count("id", filter=Q(
        status=DebateStatus.FAILED)))
    return counts["ended"], counts["failed"]

"""Reads of panel mode: one panel as the page, the API and the CLI show it."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Prefetch, Q

from arena.inputs import parse_uuid
from arena.models import AIModel
from arena.modes import Figure
from arena.queries import one_or_none
from arena.steps import FINISHED, StepStatus
from panels.judging import LABELS
from panels.models import (
    ClarificationRound,
    Panel,
    PanelAnswer,
    PanelJudgement,
    PanelStatus,
    RoundPhase,
)


def _queryset():
    return Panel.objects.select_related("question_model").prefetch_related(
        Prefetch("answers", queryset=PanelAnswer.objects.select_related("model")),
        Prefetch("judgements", queryset=PanelJudgement.objects.select_related("judge")),
        Prefetch("rounds", queryset=ClarificationRound.objects.order_by("index")),
    )


def panel_visible(*, panel_id) -> Panel | None:
    """The panel with this id, or None (also for an id that is not a UUID). Anyone with a
    panel's link may see it, as anyone with a debate's (an unlisted one is only unlisted)."""
    panel_id = parse_uuid(panel_id)
    if panel_id is None:
        return None
    return one_or_none(_queryset().filter(pk=panel_id))


def panel_list(*, session_key: str | None, limit: int = 30) -> list[Panel]:
    """The panels this visitor may see listed, newest first, with their answer counts: their
    own and the public ones (a question someone typed is never listed to others)."""
    visible = Q(is_public=True) | Q(session_key=session_key) if session_key else Q(is_public=True)
    return list(
        Panel.objects.filter(visible).annotate(
            answer_count=Count("answers", filter=Q(answers__status=StepStatus.DONE))
        ).order_by("-created_at")[:limit]
    )


@dataclass(frozen=True)
class JudgementView:
    judgement: PanelJudgement
    shown: list[tuple[str, AIModel]]  # (label, model) in the order this judge saw them
    ranking: list[tuple[int, str, AIModel]]  # (rank, label, model) best first, if valid
    self_rank: int | None


@dataclass(frozen=True)
class StandingView:
    position: int
    model: AIModel
    average_rank: float | None
    ranks: list[int | None]  # in the order of PanelView.judges
    judges: int
    self_rank: int | None


@dataclass
class PanelView:
    panel: Panel
    answers: list[PanelAnswer]
    judgements: list[JudgementView]
    rounds: list[ClarificationRound]
    models: dict[str, AIModel] = field(default_factory=dict)

    @property
    def answers_done(self) -> int:
        return sum(a.status in FINISHED for a in self.answers)

    @property
    def judgements_done(self) -> int:
        return sum(j.judgement.status in FINISHED for j in self.judgements)

    @property
    def answers_total(self) -> int:
        return len(self.answers) or len(self.panel.participants)

    @property
    def judgements_total(self) -> int:
        return len(self.judgements) or sum(a.status == StepStatus.DONE for a in self.answers)

    @property
    def open_round(self) -> ClarificationRound | None:
        last = self.rounds[-1] if self.rounds else None
        if self.panel.status == PanelStatus.CLARIFYING and last and last.phase != RoundPhase.DONE:
            return last
        return None

    @property
    def asking(self) -> bool:
        """Waiting for the person to answer clarifying questions (the page stops polling)."""
        return self.open_round is not None and self.open_round.phase == RoundPhase.ASKING

    @property
    def judges(self) -> list[AIModel]:
        return [j.judgement.judge for j in self.judgements if j.judgement.is_valid]

    @property
    def discarded(self) -> list[JudgementView]:
        return [j for j in self.judgements if j.judgement.status in FINISHED
                and not j.judgement.is_valid]

    def standings(self, *, exclude_self: bool = False) -> list[StandingView]:
        verdict = self.panel.verdict or {}
        key = "standings_without_self_votes" if exclude_self else "standings"
        self_ranks = verdict.get("self_ranks") or {}
        judges = [m.slug for m in self.judges]
        return [
            StandingView(
                position=row["position"],
                model=self._model(row["model"]),
                average_rank=row["average_rank"],
                ranks=[row["ranks"].get(judge) for judge in judges],
                judges=row["judges"],
                self_rank=self_ranks.get(row["model"]),
            )
            for row in verdict.get(key, [])
        ]

    @property
    def kendall_w(self) -> float | None:
        return (self.panel.verdict or {}).get("kendall_w")

    @property
    def agreement_words(self) -> str:
        """A plain reading of Kendall's W (Schmidt's guide for W: 0.1 / 0.3 / 0.5 / 0.7)."""
        w = self.kendall_w
        if w is None:
            return "not defined"
        for limit, words in ((0.1, "very weak"), (0.3, "weak"), (0.5, "moderate"),
                             (0.7, "strong")):
            if w < limit:
                return f"{words} agreement"
        return "very strong agreement"

    def leaders(self, *, exclude_self: bool = False) -> list[StandingView]:
        """Every model in first place (more than one on a tie), in the standings chosen."""
        return [s for s in self.standings(exclude_self=exclude_self)
                if s.position == 1 and s.average_rank is not None]

    def _model(self, slug: str) -> AIModel:
        return self.models.get(slug) or AIModel(slug=slug, name=slug)


def panel_view(*, panel: Panel) -> PanelView:
    answers = list(panel.answers.all())
    models = {a.model_id: a.model for a in answers}
    judgements = []
    for j in panel.judgements.all():
        models.setdefault(j.judge_id, j.judge)
        shown = [(LABELS[i], models.get(slug) or AIModel(slug=slug, name=slug))
                 for i, slug in enumerate(j.shown_order)]
        by_slug = {m.slug: (label, m) for label, m in shown}
        ranking = [(rank, *by_slug[slug]) for rank, slug in enumerate(j.ranking or [], start=1)
                   if slug in by_slug] if j.is_valid else []
        self_rank = next((rank for rank, _, m in ranking if m.slug == j.judge_id), None)
        judgements.append(JudgementView(j, shown, ranking, self_rank))
    return PanelView(panel=panel, answers=answers, judgements=judgements,
                     rounds=list(panel.rounds.all()), models=models)


def panel_payload(view: PanelView) -> dict:
    """A panel as JSON (``GET /api/panel/{id}``, ``manage.py panel --json``)."""
    panel = view.panel

    def standings(exclude_self: bool) -> list[dict]:
        return [
            {"position": s.position, "model_id": s.model.slug, "name": s.model.name,
             "average_rank": s.average_rank, "judges": s.judges, "self_rank": s.self_rank,
             "ranks": {j.slug: r for j, r in zip(view.judges, s.ranks, strict=True)
                       if r is not None}}
            for s in view.standings(exclude_self=exclude_self)
        ]

    return {
        "panel_id": str(panel.id),
        "status": panel.status,
        "error": panel.error or None,
        "question": panel.question,
        "original_question": panel.original_question,
        "question_source": panel.question_source,
        "question_model": panel.question_model_id,
        "created_at": panel.created_at,
        "finished_at": panel.finished_at,
        "progress": {"answers_done": view.answers_done, "answers_total": view.answers_total,
                     "judgements_done": view.judgements_done,
                     "judgements_total": view.judgements_total},
        "skipped": panel.skipped,
        "clarification": [
            {"round": r.index, "question": r.question, "phase": r.phase, "reply": r.reply,
             "is_clear": r.is_clear, "person_answer": r.person_answer,
             "refined_question": r.refined_question, "skipped": r.skipped,
             "error": r.error or None}
            for r in view.rounds
        ],
        "answers": [
            {"model_id": a.model_id, "name": a.model.name, "status": a.status, "text": a.text,
             "error": a.error or None, "latency_ms": a.latency_ms,
             "output_tokens": a.output_tokens, "names_model": a.names_model or None,
             "cut_at_limit": a.cut_at_limit}
            for a in view.answers
        ],
        "rankings": [
            {"judge": j.judgement.judge_id, "status": j.judgement.status,
             "valid": j.judgement.is_valid,
             "shown_order": [{"label": label, "model_id": m.slug} for label, m in j.shown],
             "ranking": [m.slug for _, _, m in j.ranking] if j.judgement.is_valid else None,
             "self_rank": j.self_rank, "attempts": j.judgement.attempts,
             "discard_reason": j.judgement.discard_reason or None,
             "error": j.judgement.error or None, "replies": j.judgement.replies}
            for j in view.judgements
        ],
        "verdict": None if panel.verdict is None else {
            "standings": standings(False),
            "standings_without_self_votes": standings(True),
            "kendall_w": view.kendall_w,
            "judges_counted": panel.verdict.get("judges_counted"),
            "judges_discarded": len(view.discarded),
        },
    }


def home_figures() -> list[Figure]:
    return [Figure("panels judged", Panel.objects.filter(status=PanelStatus.DONE).count())]

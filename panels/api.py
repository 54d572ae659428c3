"""The panel JSON API. Thin: parse, call a service or selector, shape.

``POST /api/panel/run`` starts a panel and answers at once with its id (the models answer
and judge in the background); ``GET /api/panel/{id}`` shows where it is and, once done, the
verdict. Errors are ``{"detail": "..."}``.
"""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from ninja import Field, Router, Schema

from arena.api_errors import errors
from arena.visitors import PANEL_CREATE, found_or_404, visitor_read, visitor_write
from panels import selectors, services
from panels.models import PanelOrigin

router = Router(tags=["panel"])

NOT_FOUND = "Panel not found."


class PanelRunIn(Schema):
    question: str = ""
    models: list[str] | None = Field(None, description="Model ids (default: every available).")
    auto: bool = Field(False, description="Let the question model write the question.")
    public: bool = Field(False, description="List the panel (its question) to everyone; "
                                            "otherwise it is seen by its link and in your list.")


class PanelRunOut(Schema):
    panel_id: str


class AnswerOut(Schema):
    model_id: str
    name: str
    status: str
    text: str
    error: str | None
    latency_ms: int | None
    output_tokens: int | None
    names_model: str | None
    cut_at_limit: bool = False  # stopped at the model's length limit: the rest is missing


class ShownOut(Schema):
    label: str
    model_id: str


class RankingOut(Schema):
    judge: str
    status: str
    valid: bool
    shown_order: list[ShownOut]
    ranking: list[str] | None
    self_rank: int | None
    attempts: int
    discard_reason: str | None
    error: str | None
    replies: list[str]


class PanelStandingOut(Schema):
    position: int
    model_id: str
    name: str
    average_rank: float | None
    judges: int
    self_rank: int | None
    ranks: dict[str, int]


class VerdictOut(Schema):
    standings: list[PanelStandingOut]
    standings_without_self_votes: list[PanelStandingOut]
    kendall_w: float | None
    judges_counted: int | None
    judges_discarded: int


class PanelOut(Schema):
    panel_id: str
    status: str
    error: str | None
    question: str
    original_question: str
    question_source: str
    question_model: str | None
    created_at: datetime
    finished_at: datetime | None
    progress: dict[str, int]
    skipped: list[dict]
    clarification: list[dict]
    answers: list[AnswerOut]
    rankings: list[RankingOut]
    verdict: VerdictOut | None


class PanelSummaryOut(Schema):
    panel_id: str
    question: str
    status: str
    answers: int
    created_at: datetime
    public: bool


class PanelListOut(Schema):
    panels: list[PanelSummaryOut]


@router.post("/panel/run", response={200: PanelRunOut, **errors(400, 413, 422, 429, 503)})
def run_panel(request: HttpRequest, payload: PanelRunIn):
    """Start a panel: every available model (or ``models``) answers, then every answering
    model ranks all answers. Poll ``GET /api/panel/{panel_id}``."""
    panel = visitor_write(request, lambda key: services.panel_create(
        question=payload.question, models=payload.models, auto=payload.auto,
        session_key=key, origin=PanelOrigin.API, public=payload.public,
    ), PANEL_CREATE)
    return {"panel_id": str(panel.id)}


@router.get("/panel/{panel_id}", response={200: PanelOut, **errors(404)})
def get_panel(request: HttpRequest, panel_id: str):
    """Status, answers, every judge's ranking and, once done, the verdict."""
    panel = found_or_404(selectors.panel_visible(panel_id=panel_id), NOT_FOUND)
    return selectors.panel_payload(selectors.panel_view(panel=panel))


@router.get("/panels", response=PanelListOut)
def list_panels(request: HttpRequest):
    """Your panels and the public ones, newest first."""
    panels = visitor_read(request, lambda key: selectors.panel_list(session_key=key))
    return {"panels": [
        {"panel_id": str(p.id), "question": p.question, "status": p.status,
         "answers": p.answer_count, "created_at": p.created_at, "public": p.is_public}
        for p in panels
    ]}

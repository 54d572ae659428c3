"""``GET /api/models/{id}``: a model's page as JSON (seed 001's model details, and more)."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest
from ninja import Field, Router, Schema

from arena.api_errors import errors
from arena.errors import RuleError
from leaderboard.pages.model_pages import model_page

router = Router(tags=["models"])

MODEL_NOT_FOUND = "Model not found."


class StandingOut(Schema):
    board: str
    category: str | None = None  # a category board of ``board``; null for the whole board
    title: str
    rated: bool  # has an entry in the board's latest snapshot
    provisional: bool | None
    rating: float | None
    ci_lower: float | None
    ci_upper: float | None
    volatility: float | None = None  # Glicko-2's σ (Glicko-2 boards; null elsewhere)
    rank_ub: int | None
    elo: float | None
    votes: int


class OpponentOut(Schema):
    board: str
    model_id: str
    name: str
    votes: int
    won: int
    lost: int
    tie: int
    both_bad: int
    win_rate: float


class RecentOut(Schema):
    title: str
    url: str
    at: datetime
    result: str


class ModelDetailOut(Schema):
    model_id: str
    name: str
    provider: str
    status: str
    organization: str
    license: str
    provider_kind: str
    is_local: bool
    available: bool  # can battle now (running locally, or its key is set)
    context_tokens: int | None
    max_tokens: int
    input_price_per_million: float
    output_price_per_million: float
    boards: list[StandingOut]
    opponents: list[OpponentOut]
    recent_battles: list[RecentOut]  # public (voted) ones only, newest first
    extras: dict[str, dict] = Field(
        description="What a board adds about this model, by board name (the voice board "
                    "`agent`: the voice agents built on it and their win rates per "
                    "dimension, with counts and 95% Wilson intervals).")


@router.get("/models/{model_id}", response={200: ModelDetailOut, **errors(404)})
def get_model(request: HttpRequest, model_id: str):
    """One model of the registry: its card, its rating on every board, its record against
    each opponent and its latest public battles (the data of ``/models/<id>/``)."""
    page = model_page(model_id=model_id)
    if page is None:
        raise RuleError(MODEL_NOT_FOUND, status=404)
    m = page.model
    return {
        "model_id": m.slug, "name": m.name, "provider": m.provider, "status": m.status,
        "organization": m.organization, "license": m.license,
        "provider_kind": m.provider_kind, "is_local": m.is_local,
        "available": page.available, "context_tokens": m.context_tokens,
        "max_tokens": m.max_tokens,
        "input_price_per_million": float(m.input_price_per_million),
        "output_price_per_million": float(m.output_price_per_million),
        "boards": [row for s in page.standings for row in _standing_rows(s)],
        "opponents": [
            {"board": s.board.name, "model_id": o.subject, "name": o.name, "votes": o.votes,
             "won": o.won, "lost": o.lost, "tie": o.tie, "both_bad": o.both_bad,
             "win_rate": o.win_rate}
            for s in page.standings for o in s.opponents
        ],
        "recent_battles": [{"title": r.title, "url": r.url, "at": r.when, "result": r.result}
                           for r in page.recent],
        "extras": {extra.board.name: extra.data for extra in page.extras},
    }


def _standing_rows(s) -> list[dict]:
    """The board's row, then one per category board the model is on."""
    return [_standing(s.board.name, s.board.title, s.entry, s.elo),
            *(_standing(s.board.name, c.title, c.entry, None, category=c.category)
              for c in s.categories)]


def _standing(board: str, title: str, e, elo: float | None, *, category: str | None = None
              ) -> dict:
    return {
        "board": board, "category": category, "title": title, "rated": e is not None,
        "provisional": e.provisional if e else None,
        "rating": e.rating if e else None,
        "ci_lower": e.ci_lower if e else None, "ci_upper": e.ci_upper if e else None,
        "volatility": e.volatility if e else None,
        "rank_ub": e.rank_ub if e and not e.provisional else None,
        "elo": elo, "votes": e.votes if e else 0,
    }

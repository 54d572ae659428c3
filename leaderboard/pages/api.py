"""The leaderboard and worker API of seed 001. Thin: parse, call a selector or service.

``GET /api/leaderboard`` and ``GET /api/leaderboard/stats`` read the latest snapshots;
``GET /api/worker/status`` reports rating runs; ``POST /api/worker/aggregate`` (staff
only, with a CSRF token like any session-authenticated POST) runs the rating now.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router, Schema
from ninja.utils import check_csrf
from pydantic import BaseModel

from arena.aio import database_call
from arena.api_errors import errors
from arena.edge import public_for
from arena.errors import RuleError
from leaderboard.boards import UnknownBoard
from leaderboard.models import RunStatus, RunTrigger
from leaderboard.pages import selectors, stats
from leaderboard.pages.model_api import router as model_router
from leaderboard.runs.services import RunInProgress, ratings_run

router = Router(tags=["leaderboard"])
router.add_router("", model_router)  # GET /api/models/{id}: a model's page as JSON

STAFF_ONLY = "Only staff can run the rating by hand."
CSRF_FAILED = "CSRF check failed: send the X-CSRFToken header with this session's token."
MAX_BOOTSTRAP_ROUNDS = 1000


class LeaderboardParams(Schema):
    board: str | None = None
    # The server's own checks (422 naming the choices) are documented as enums.
    # controversy and factuality: the debate boards' own figures (422 on other boards).
    sort: str | None = Field(None, json_schema_extra={
        "enum": [*selectors.SORTS, *selectors.METRIC_SORTS]})
    order: str | None = Field(None, json_schema_extra={"enum": list(selectors.ORDERS)})
    organization: str | None = None
    license: str | None = None
    search: str | None = None
    include_provisional: bool = False
    include_deprecated: bool = False
    style_control: bool = False  # ratings with answer length and Markdown held equal
    # A category board (coding, math, creative_writing, instruction_following, hard_prompt,
    # multi_turn, long_query, lang-<code>): one with enough votes, else 422 naming them.
    category: str | None = Field(None, max_length=40)


class CategoryOut(Schema):
    name: str
    title: str
    votes: int  # counted votes of the board's battles in this category
    rated: bool  # it has a board of its own (ARENA_LEADERBOARD_CATEGORY_MIN_VOTES votes)


class StyleCoefficientOut(Schema):
    element: str  # tokens, headers, lists or bold
    value: float  # log-odds per standard deviation of the style difference
    ci_lower: float
    ci_upper: float
    fitted: bool = True  # false: the votes could not estimate it and the fit left it out
    note: str = ""  # why it was left out


class EntryOut(Schema):
    rank_ub: int | None
    model_id: str
    model_name: str
    rating: float
    ci_lower: float
    ci_upper: float
    elo: float | None
    votes: int
    wins: int
    losses: int
    ties: int
    both_bad: int
    win_rate: float
    organization: str
    license: str
    provisional: bool
    deprecated: bool
    rating_deviation: float | None = Field(
        None, description="Glicko-2's RD (the interval is rating ± 1.96 RD); null on boards "
                          "rated otherwise.")
    volatility: float | None = Field(
        None, description="Glicko-2's volatility σ; null on boards rated otherwise.")
    controversy_index: float | None = Field(
        None, description="Debate boards: (crowd rating − AI rating) / √(RD_crowd² + "
                          "RD_AI²); null elsewhere, or until both debate boards rate the "
                          "model.")
    avg_factuality: float | None = Field(
        None, description="Debate boards: the average factuality (0-1) of the model's "
                          "fact-checked speeches; null elsewhere or without any.")


class RunOut(Schema):
    id: int
    boards: list[str]
    trigger: str
    status: str
    started_at: datetime
    finished_at: datetime | None
    duration_ms: int | None
    outcomes_processed: int
    error: str
    failed_boards: list[str] = []  # boards (board/category) this run could not rate


class MetadataOut(Schema):
    board: str
    title: str
    method: str | None
    ci_method: str | None
    min_votes: int | None
    total_models: int
    total_votes: int
    last_updated: datetime | None
    style_control: bool = False  # these ratings are the style-controlled ones
    style_coefficients: list[StyleCoefficientOut] | None = None
    category: str | None = None  # the category board shown; null for the whole board
    categories: list[CategoryOut] = []  # the board's categories, most voted first
    # A run that could not rate this board since last_updated: these ratings leave out the
    # votes since (each is kept and counts once a run succeeds).
    failed_run: RunOut | None = None


class LeaderboardOut(Schema):
    leaderboard: list[EntryOut]
    metadata: MetadataOut


class BoardStatsOut(Schema):
    title: str
    method: str
    outcomes: int
    battles: int | None
    votes: int | None
    models: int
    models_rated: int
    last_updated: datetime | None
    # A run that could not rate this board since its snapshot (last_updated) was written:
    # the board's numbers are older than its votes until a run succeeds.
    failed_run: RunOut | None = None


class StatsOut(Schema):
    total_battles: int
    total_votes: int
    total_models: int
    last_updated: datetime | None
    boards: dict[str, BoardStatsOut]
    last_run: RunOut | None


class WorkerStatusOut(Schema):
    last_run: datetime | None
    status: str
    votes_processed: int
    last_success: datetime | None
    pending_runs: dict[str, str]
    runs: list[RunOut]


# A plain pydantic model, not a ninja Schema: a Schema reads any JSON value (a list, a
# number) as an object whose fields all take their defaults, so a body that is not an object
# would run every board instead of answering 422.
class AggregateIn(BaseModel):
    board: str | None = None
    # Bootstrap rounds: at least 1, like the setting and the command; at most 1000 (~70 s for
    # 200 models), so one request cannot hold the boards' locks for hours.
    bootstrap: int | None = Field(None, ge=1, le=MAX_BOOTSTRAP_ROUNDS)


def staff_session(request: HttpRequest):
    """Auth for staff tools: a staff session, plus its CSRF token (403 otherwise).

    Runs before the body is parsed, so a visitor gets 403 whatever they send.
    """
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.is_staff:
        raise RuleError(STAFF_ONLY, status=403)
    if check_csrf(request) is not None:
        raise RuleError(CSRF_FAILED, status=403)
    return user


def _entry(row: selectors.Row) -> dict:
    e = row.e
    return {
        "rank_ub": row.rank or None,
        "model_id": e.subject,
        "model_name": e.name,
        "rating": e.rating,
        "ci_lower": e.ci_lower,
        "ci_upper": e.ci_upper,
        "elo": row.elo,
        "votes": e.votes,
        "wins": e.wins,
        "losses": e.losses,
        "ties": e.ties,
        "both_bad": e.both_bad,
        "win_rate": e.win_rate,
        "organization": e.organization,
        "license": e.license,
        "provisional": e.provisional,
        "deprecated": e.deprecated,
        "rating_deviation": row.rd,
        "volatility": e.volatility,
        "controversy_index": row.metrics.get("controversy_index"),
        "avg_factuality": row.metrics.get("avg_factuality"),
    }


@router.get("/leaderboard", response={200: LeaderboardOut, **errors(404, 422)})
async def leaderboard(request: HttpRequest, params: Query[LeaderboardParams]):
    """Ranked entries of a board from its latest snapshot (provisional ones on request).
    The answer is the same for everyone, marked public for ``ARENA_LEADERBOARD_ANSWER_SECONDS``
    (a rating run or a vote's Elo shows within that): each web process repeats it from memory
    for that long (:mod:`arena.edge`), so a busy board costs no database work per read."""
    answer = HttpResponse(await database_call(_leaderboard_json)(params),
                          content_type="application/json")
    return public_for(answer, settings.ARENA_LEADERBOARD_ANSWER_SECONDS)


def _leaderboard_json(params: LeaderboardParams) -> bytes:
    try:
        query = selectors.leaderboard_query_clean(
            board=params.board,
            sort=params.sort,
            order=params.order,
            organization=params.organization,
            license=params.license,
            search=params.search,
            include_deprecated=params.include_deprecated,
            include_provisional=params.include_provisional,
            style_control=params.style_control,
            category=params.category,
        )
    except UnknownBoard as exc:
        raise RuleError(exc.args[0], status=404) from None
    except selectors.QueryError as exc:
        raise RuleError(str(exc), status=422) from None
    page = selectors.leaderboard_view(query=query)
    snap = page.snapshot
    entries = [_entry(r) for r in page.rows + page.provisional]
    answer = {
        "leaderboard": entries,
        "metadata": {
            "board": page.board.name,
            "title": page.board.title,
            "method": snap.method if snap else None,
            "ci_method": snap.ci_method if snap else None,
            "min_votes": snap.min_votes if snap else None,
            "total_models": len(entries),
            "total_votes": snap.outcomes if snap else 0,
            "last_updated": snap.created_at if snap else None,
            "style_control": page.style_shown,
            "category": query.category or None,
            "categories": [vars(c) for c in page.categories],
            "style_coefficients": page.style_coefficients,
            "failed_run": stats.run_summary(page.failed_run) if page.failed_run else None,
        },
    }
    return LeaderboardOut.model_validate(answer).model_dump_json().encode()


@router.get("/leaderboard/stats", response=StatsOut)
def leaderboard_stats(request: HttpRequest):
    """Battles, votes and models over every board, per-board counts and the last run."""
    return stats.leaderboard_stats()


@router.get("/worker/status", response=WorkerStatusOut)
def worker_status(request: HttpRequest):
    return stats.worker_status()


@router.post("/worker/aggregate",
             response={200: RunOut, **errors(400, 403, 404, 409, 413, 422, 500, 503)},
             auth=staff_session)
def worker_aggregate(request: HttpRequest, payload: AggregateIn | None = None):
    """Run the rating now (staff only); answers when the run is recorded."""
    payload = payload or AggregateIn()
    try:
        run = ratings_run(
            trigger=RunTrigger.API,
            boards=[payload.board] if payload.board else None,
            bootstrap_rounds=payload.bootstrap,
            lock_wait=10,
        )
    except UnknownBoard as exc:
        raise RuleError(exc.args[0], status=404) from None
    except RunInProgress as exc:
        raise RuleError(exc.message, status=409) from None
    if run.status == RunStatus.FAILED:
        raise RuleError(f"The rating run failed: {run.error}", status=500)
    return stats.run_summary(run)

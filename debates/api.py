"""The debate JSON API (seed 004). Thin: parse, call a service or selector, shape.

``POST /api/debate/run`` starts a debate and answers at once with its id (the debate runs in
the background); ``GET /api/debates/{id}`` shows its status, transcript, fact checks,
verdicts and crowd result. Models are named only to a session that voted or revealed them.
Every request counts against seed 004's limit of 100 an hour per visitor; starting a debate
also against 10 an hour.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from arena.api_errors import errors
from arena.contests.flags import voter_of
from arena.contests.human_check import human_check_require
from arena.visitors import (
    DEBATE_API,
    DEBATE_CREATE,
    found_or_404,
    visitor_count,
    visitor_read,
    visitor_write,
)
from debates import crowd, selectors, services, usage
from debates.models import MAX_ROUNDS, MAX_WORD_LIMIT, MIN_ROUNDS, MIN_WORD_LIMIT, DebateOrigin
from debates.payloads import debate_payload

router = Router(tags=["debates"])

NOT_FOUND = "Debate not found."


CHOSEN_NOTE = " Choosing one makes the debate chosen: your own vote on it will not count."


class DebateRunIn(Schema):
    model_a: str | None = Field(None, description="Model id (default: random available)."
                                + CHOSEN_NOTE)
    model_b: str | None = Field(None, description="Model id (default: random available)."
                                + CHOSEN_NOTE)
    topic_id: str | None = Field(None, description="A topic's id (default: a random one).")
    motion: str | None = Field(None, description="Your own motion instead of a topic.")
    persona_a: str | None = Field(None, description="Persona id or name of model_a."
                                  + CHOSEN_NOTE)
    persona_b: str | None = Field(None, description="Persona id or name of model_b."
                                  + CHOSEN_NOTE)
    rounds: int = Field(3, description=f"{MIN_ROUNDS} to {MAX_ROUNDS}.")
    word_limit: int = Field(150, description=f"Per turn, {MIN_WORD_LIMIT} to {MAX_WORD_LIMIT}.")
    fact_checking: bool = True
    strict_mode: bool = Field(False, description="A turn with a false claim is rewritten once.")
    listed: bool | None = Field(None, description="Listed on /debates/ for everyone; False: "
                                "only people with the link. Default: a library topic is "
                                "listed, your own motion is not.")


class DebateRunOut(Schema):
    debate_id: str
    status: str


class DebateSideOut(Schema):
    position: str
    persona: str
    model_id: str | None
    model_name: str | None
    tokens: int | None = Field(description="Null until you vote or reveal (as the model).")
    cost_usd: float | None = Field(description="Null until you vote or reveal.")


class DebateFactCheckOut(Schema):
    claim: str
    type: str
    verdict: str
    confidence: float
    explanation: str
    evidence: list[dict]


class DebateTurnOut(Schema):
    round: int
    position: str
    persona: str
    reflection: str
    critique: str
    speech: str
    tags_missing: bool
    cut_at_word_limit: bool
    revised: bool
    first_speech: str | None
    factuality: float | None
    tokens: int | None
    latency_ms: int | None
    fact_checks: list[DebateFactCheckOut]


class DebateEvaluationOut(Schema):
    role: str
    order: str
    winner: str | None
    logical_coherence: int | None
    rebuttal_strength: int | None
    factuality: int | None
    justification: str
    justification_words: int
    justification_short: bool = Field(description="Under the 100 words seed 004 asks for, "
                                      "even after the judge was asked again: kept, marked.")
    justification_reasks: int = Field(description="Times the judge was asked again for a "
                                      "justification of at least 100 words (at most 2).")
    flagged_fallacies: list[dict]
    attempts: int
    error: str | None


class DebateOut(Schema):
    debate_id: str
    status: str
    currentRound: int = Field(description="Seed 004: the round under way; after the last "
                              "round, the last one spoken in; 0 before the first.")
    currentSpeaker: Literal["pro", "con"] | None = Field(
        description="Seed 004: the side whose speech is being written; null when nobody "
                    "speaks (moderator, fact-check, judging, paused, ended).")
    error: str | None
    motion: str
    category: str
    rounds: int
    word_limit: int
    fact_checking: bool
    strict_mode: bool
    listed: bool
    chosen: bool = Field(description="Its creator chose a model or persona: the creator's own "
                         "vote does not count.")
    sides: list[DebateSideOut]
    moderator: list[str]
    transcript: list[DebateTurnOut]
    evaluations: list[DebateEvaluationOut]
    ai_winner: str | None
    ai_consensus: bool | None
    tiebreaker_used: bool
    needs_review: bool
    judged: bool  # false: every model debated, so no AI verdict (the crowd decides)
    judge: str | None
    factuality: float | None
    crowd: dict[str, int]
    crowd_winner: str | None
    your_vote: str | None
    your_wager: int | None
    your_payout: int | None
    your_points: int | None
    wagers_open: bool
    cost_usd: float | None = Field(description="Null until you vote or reveal.")
    tokens: int | None = Field(description="Null until you vote or reveal.")
    duration_ms: int | None
    created_at: datetime
    completed_at: datetime | None


class DebateSummaryOut(Schema):
    debate_id: str
    motion: str
    category: str
    status: str
    pro: str
    con: str
    turns: int
    created_at: datetime


class DebateListOut(Schema):
    debates: list[DebateSummaryOut]


class DebateListQuery(Schema):
    category: str = ""
    model: str = Field("", description="Only debates you voted on or revealed.")
    status: str = ""


class UsageQuery(Schema):
    by: str = Field("category", description="category (the motion's) or rounds.",
                    json_schema_extra={"enum": list(usage.USAGE_BY)})


class UsageRowOut(Schema):
    key: str = Field(description="The category, the number of rounds, or all (the total).")
    label: str
    debates: int
    withheld: bool = Field(description=f"A kind of fewer than {usage.USAGE_MIN_DEBATES} "
                           "debates, or one withheld so that such a kind's figures cannot be "
                           "worked out from the others: the count only.")
    tokens: int | None
    tokens_per_debate: float | None
    debater_tokens: int | None = Field(description="Both sides' speeches, together.")
    judging_tokens: int | None = Field(description="Fact-checking and judging.")


class UsageOut(Schema):
    by: str
    min_debates: int
    rows: list[UsageRowOut]


class DebateVoteIn(Schema):
    debate_id: str
    choice: str = Field(..., description="pro, con or tie.")
    wager: int = Field(0, description="Debate points (until judging starts).")
    publish_text: bool = Field(False, description="The voter lets the motion and speeches be "
                               "published in the open data releases (listed debates only).")


class DebateVoteOut(Schema):
    debate_id: str
    choice: str
    wager: int
    points: int
    sides: list[DebateSideOut]


def _visible(debate_id: str):
    return found_or_404(selectors.debate_visible(debate_id=debate_id), NOT_FOUND)


def _view(request: HttpRequest, debate):
    return visitor_read(request, lambda key: selectors.debate_view(debate=debate,
                                                                  session_key=key))


@router.post("/debate/run", response={200: DebateRunOut, **errors(400, 413, 422, 429, 503)})
def run_debate(request: HttpRequest, payload: DebateRunIn):
    """Start a debate; an invalid configuration is a 400 naming every problem. Follow it
    with ``GET /api/debates/{debate_id}`` or the socket ``/ws/debates/{debate_id}/``."""
    debate = visitor_write(request, lambda key: services.debate_create(
        session_key=key, origin=DebateOrigin.API,
        **payload.dict(exclude={"listed"}), listed=payload.listed), DEBATE_API, DEBATE_CREATE)
    return {"debate_id": str(debate.pk), "status": debate.status}


@router.get("/debates", response={200: DebateListOut, **errors(429)})
def list_debates(request: HttpRequest, filters: Query[DebateListQuery]):
    """Listed debates, newest first, by persona and position (models stay hidden)."""
    debates = visitor_read(request, lambda key: selectors.debate_list(**filters.dict(),
                                                                      session_key=key),
                           DEBATE_API)
    return {"debates": [
        {"debate_id": str(d.pk), "motion": d.motion, "category": d.category,
         "status": d.status, "pro": d.pro, "con": d.con, "turns": d.turn_count,
         "created_at": d.created_at}
        for d in debates]}


@router.get("/debates/usage", response={200: UsageOut, **errors(422, 429)})
def debate_usage(request: HttpRequest, filters: Query[UsageQuery]):
    """Token usage per kind of debate (seed 004), by category or by rounds, over completed
    debates counted in whole batches of ``min_debates`` (so one debate ending does not move
    the figures): one row per kind, then ``all``."""
    visitor_count(request, DEBATE_API, write=False)
    rows = usage.debate_usage(by=filters.by)
    return {"by": filters.by, "min_debates": usage.USAGE_MIN_DEBATES, "rows": [
        {"key": r.key, "label": r.label, "debates": r.debates, "withheld": r.withheld,
         "tokens": r.tokens, "tokens_per_debate": r.tokens_per_debate,
         "debater_tokens": r.debater_tokens, "judging_tokens": r.judging_tokens}
        for r in rows]}


@router.get("/debates/{debate_id}", response={200: DebateOut, **errors(404, 429)})
def get_debate(request: HttpRequest, debate_id: str):
    """Status, transcript with fact checks, the judge's verdicts and the crowd result."""
    visitor_count(request, DEBATE_API, write=False)
    return debate_payload(_view(request, _visible(debate_id)))


def _control(request: HttpRequest, debate_id: str, action):
    debate = _visible(debate_id)
    visitor_count(request, DEBATE_API)
    visitor_read(request, lambda key: action(debate_id=debate.pk, session_key=key or ""))
    return debate_payload(_view(request, _visible(debate_id)))


@router.post("/debates/{debate_id}/pause", response={200: DebateOut,
                                                     **errors(403, 404, 409, 429, 503)})
def pause_debate(request: HttpRequest, debate_id: str):
    """Pause after the step being written (only the session that started it)."""
    return _control(request, debate_id, services.debate_pause)


@router.post("/debates/{debate_id}/resume", response={200: DebateOut,
                                                      **errors(403, 404, 409, 429, 503)})
def resume_debate(request: HttpRequest, debate_id: str):
    return _control(request, debate_id, services.debate_resume)


@router.post("/debates/{debate_id}/cancel", response={200: DebateOut,
                                                      **errors(403, 404, 409, 429, 503)})
def cancel_debate(request: HttpRequest, debate_id: str):
    """Stop the debate for good; everything written so far is kept."""
    return _control(request, debate_id, services.debate_cancel)


@router.post("/debate/vote",
             response={200: DebateVoteOut, **errors(400, 404, 409, 413, 422, 428, 429, 503)})
def vote_debate(request: HttpRequest, payload: DebateVoteIn):
    """Vote pro, con or tie once, with an optional wager; the answer names the models.
    A second vote from the same session is a 409."""
    visitor_count(request, DEBATE_API)
    debate = _visible(payload.debate_id)
    def act(key):
        human_check_require(request, session_key=key)
        return crowd.debate_vote(
            debate_id=debate.pk, session_key=key, choice=payload.choice, wager=payload.wager,
            voter=voter_of(request), publish_text=payload.publish_text)

    vote = visitor_write(request, act)
    view = _view(request, debate)
    return {"debate_id": str(debate.pk), "choice": vote.choice, "wager": vote.wager,
            "points": view.points, "sides": debate_payload(view)["sides"]}

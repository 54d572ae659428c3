"""The ledger of model calls, and the daily spend cap it makes possible.

Every call the client makes (:mod:`arena.llm.client`) is entered as one
:class:`arena.models.ModelCall` row: model, endpoint, the mode and kind of work it served
(:func:`call_purpose`, set by the step runner around a step's work and by the voice proxy
around a call), how it went, its latency, tokens and cost. The operations page, the alerts
and ``manage.py costs`` read it; a model's spend today, summed from it, is checked before
each call against the model's daily cap (:func:`check_budget`), so every mode obeys one cap:
the cap holds for each endpoint of the model (its own provider, its fallback), each being
its own provider's bill.

The ledger never costs a call its answer: a row that cannot be written is logged and the
call goes on. A step's calls are kept in memory while it works and entered when it ends
(:func:`calls_held`), with the connection the step saves with.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

from arena.llm.errors import LLMError, LLMOverBudget
from arena.llm.types import Completion, ModelEndpoint

logger = logging.getLogger("arena.llm")

_purpose: ContextVar[tuple[str, str]] = ContextVar("arena_call_purpose", default=("", ""))
_held: ContextVar[list[dict] | None] = ContextVar("arena_calls_held", default=None)


@contextmanager
def call_purpose(mode: str, kind: str) -> Iterator[None]:
    """The calls made inside are entered as ``mode``'s ``kind`` of work (the context is
    copied into the coroutines and threads the work starts)."""
    token = _purpose.set((mode, kind))
    try:
        yield
    finally:
        _purpose.reset(token)


def set_call_purpose(mode: str, kind: str) -> None:
    """The same for the rest of the current task (a voice call's consumer)."""
    _purpose.set((mode, kind))


def start_of_day(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def spent_today(slug: str, *, served_by: str | None = None) -> float:
    """What the model's calls cost since midnight (UTC), over every mode: through one of its
    endpoints (``served_by``: each is its own provider's bill), or through any."""
    from django.db.models import Sum  # noqa: PLC0415 - the ledger loads with the client
    from django.utils import timezone  # noqa: PLC0415

    from arena.models import ModelCall  # noqa: PLC0415

    calls = ModelCall.objects.filter(model_slug=slug,
                                     created_at__gte=start_of_day(timezone.now()))
    if served_by is not None:
        calls = calls.filter(endpoint=served_by)
    return calls.aggregate(s=Sum("cost_usd"))["s"] or 0.0


def calls_by_provider(since: dict[str, datetime]) -> dict[str, dict[str, tuple[int, int]]]:
    """``{provider: {window: (calls, failed calls)}}`` for each window starting at
    ``since[window]``, in one query (the alerts' failure rate, the operations page)."""
    from django.db.models import Count, Q  # noqa: PLC0415

    from arena.models import ModelCall  # noqa: PLC0415

    counted = {}
    for key, start in since.items():
        counted[f"calls_{key}"] = Count("pk", filter=Q(created_at__gte=start))
        counted[f"failed_{key}"] = Count("pk", filter=Q(created_at__gte=start, ok=False))
    rows = (ModelCall.objects.filter(created_at__gte=min(since.values())).order_by()
            .values("provider").annotate(**counted))
    return {row["provider"]: {key: (row[f"calls_{key}"], row[f"failed_{key}"])
                              for key in since} for row in rows}


def check_budget(endpoint: ModelEndpoint, *, served_by: str) -> None:
    """Raise :class:`LLMOverBudget` when the model has spent its daily cap (if it has one)
    through this endpoint."""
    if endpoint.daily_spend_usd <= 0:
        return
    spent = spent_today(endpoint.slug, served_by=served_by)
    if spent >= endpoint.daily_spend_usd:
        raise LLMOverBudget(f"model {endpoint.slug} spent ${spent:.4f} of its "
                            f"${endpoint.daily_spend_usd:.2f} today through its {served_by} "
                            "endpoint")


@contextmanager
def calls_held() -> Iterator[list[dict]]:
    """The calls made inside are kept in memory, to be entered by the caller at once
    (:func:`enter_held`): a step's work holds no database connection while it waits on a
    model, and a worker running hundreds of steps would otherwise take one from the pool for
    every call it makes (the step runner enters them with the connection it saves with)."""
    held: list[dict] = []
    token = _held.set(held)
    try:
        yield held
    finally:
        _held.reset(token)


def row_of(endpoint: ModelEndpoint, *, served_by: str, completion: Completion | None = None,
           error: LLMError | None = None) -> dict:
    """One call's row, as :class:`arena.models.ModelCall`'s fields."""
    from django.utils import timezone  # noqa: PLC0415

    mode, kind = _purpose.get()
    fields = {"created_at": timezone.now(), "model_slug": endpoint.slug,
              "provider": endpoint.provider or endpoint.provider_kind, "endpoint": served_by,
              "mode": mode, "kind": kind, "ok": error is None}
    if completion is not None:
        fields.update(latency_ms=completion.latency_ms, ttft_ms=completion.ttft_ms,
                      input_tokens=completion.input_tokens,
                      output_tokens=completion.output_tokens, cost_usd=completion.cost_usd)
    else:
        fields["error_kind"] = type(error).__name__
    return fields


def enter(rows: list[dict]) -> None:
    from arena.models import ModelCall  # noqa: PLC0415

    ModelCall.objects.bulk_create([ModelCall(**row) for row in rows])


def enter_held(rows: list[dict]) -> None:
    """Enter the calls :func:`calls_held` kept; logged, never raised, if that fails."""
    if not rows:
        return
    try:
        enter(rows)
    except Exception as exc:  # the step's own result matters more than these rows
        logger.warning("%d model calls could not be entered in the ledger (%s)", len(rows),
                       type(exc).__name__)


async def record(endpoint: ModelEndpoint, *, served_by: str,
                 completion: Completion | None = None, error: LLMError | None = None) -> None:
    """Enter the call in the ledger, or keep it for whoever holds the calls (a step); a row
    that cannot be written is logged, never raised: the answer matters more than its entry."""
    from arena.aio import database_call  # noqa: PLC0415

    row = row_of(endpoint, served_by=served_by, completion=completion, error=error)
    held = _held.get()
    if held is not None:
        held.append(row)
        return
    try:
        await database_call(enter)([row])
    except Exception as exc:
        logger.warning("a call of %s could not be entered in the ledger (%s)", endpoint.slug,
                       type(exc).__name__)

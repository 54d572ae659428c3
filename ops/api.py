"""``GET /api/ops``: the operations page's figures as JSON, for staff (a staff session;
403 otherwise). The same selector as the page, read at one moment."""

from __future__ import annotations

from dataclasses import asdict

from django.http import HttpRequest
from ninja import Router

from arena.api_errors import errors
from arena.errors import RuleError
from ops.selectors import Overview, operations_overview

STAFF_ONLY = "Only staff can read the operations figures."
router = Router(tags=["operations"])


def staff_session(request: HttpRequest):  # noqa: ANN201 - the user, for ninja's request.auth
    """A reading needs no CSRF token (it changes nothing), only a staff session."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.is_staff:
        raise RuleError(STAFF_ONLY, status=403)
    return user


def _windows(figures: dict, rate_name: str) -> dict:
    return {key: {**asdict(f), rate_name: getattr(f, rate_name)} for key, f in figures.items()}


def overview_json(o: Overview) -> dict:
    """Plain JSON of the page's figures: rates included, nothing the page does not show."""
    last = o.runs.last
    return {
        "at": o.now,
        "providers": [{"provider": p.provider, "top_error": p.top_error,
                       "windows": _windows(p.windows, "error_rate")} for p in o.providers],
        "spend_today": [{**asdict(m), "used": m.used, "status": m.status} for m in o.spend],
        "work": [{"mode": c.mode, "work": c.work,
                  "windows": _windows(c.windows, "completion_rate")} for c in o.completion],
        "votes_per_day": {"days": o.votes.days, "modes": o.votes.per_mode},
        "workers": asdict(o.workers),
        "beat": asdict(o.beat),
        "rating_runs": {"last_status": last.status if last else None,
                        "last_started_at": last.started_at if last else None,
                        "succeeded_24h": o.runs.succeeded_today,
                        "failed_24h": o.runs.failed_today},
        "boards": [{"board": name, "title": title,
                    "stability": {**asdict(s), "uncertainty_label": s.uncertainty_label}
                    if s else None} for name, title, s in o.boards],
    }


@router.get("/ops", auth=staff_session, response={200: dict, **errors(403)})
def ops_figures(request: HttpRequest):
    """Every figure of the operations page (/ops/): providers, spend today, work and votes
    per mode, workers and beat, rating stability."""
    return overview_json(operations_overview())

"""Core pages: home, health, error pages."""

from __future__ import annotations

import json
import logging
import sys

from axes.helpers import get_cool_off
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeout

from arena.errors import RuleError, wants_json
from arena.health import bearer_holds, health_report, may_see_details, ready_report
from arena.modes import Figure, home_figures, modes
from arena.ratelimit import visitor_limit
from arena.selectors import model_list_available

logger = logging.getLogger("arena.csp")
CSP_REPORTS_PER_MINUTE = 30
METRICS_UNAUTHORIZED = ("The metrics need the header 'Authorization: Bearer <token>' with the "
                        "token set in ARENA_METRICS_TOKEN.")


def home(request: HttpRequest):
    """What each mode is, in one line, with the arena's live figures."""
    sections = [(mode, home_figures(mode) if mode.is_open else []) for mode in modes()]
    # Models that can battle now (cached probes), not every entry of the models file.
    figures = [Figure("models ready", len(model_list_available()))]
    figures += [figure for _, mode_figures in sections for figure in mode_figures]
    return render(request, "arena/home.html", {"sections": sections, "figures": figures})


def healthz(request: HttpRequest) -> JsonResponse:
    """200 while the database and Redis answer, else 503; details for staff or a token."""
    report = health_report(detailed=may_see_details(request))
    essential = report["database"]["ok"] and report["redis"]["ok"]
    return JsonResponse(report, status=200 if essential else 503)


def metrics(request: HttpRequest) -> HttpResponse:
    """Every process's metrics on this node in Prometheus's text format, for a bearer of
    ``ARENA_METRICS_TOKEN`` (401 without it); 404 while no token is set."""
    from arena.metrics import metrics_text  # noqa: PLC0415 - prometheus-client, when asked

    if not settings.ARENA_METRICS_TOKEN:
        raise Http404("Metrics are off: set ARENA_METRICS_TOKEN.")
    if not bearer_holds(request, settings.ARENA_METRICS_TOKEN):
        response = JsonResponse({"detail": METRICS_UNAUTHORIZED}, status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body, content_type = metrics_text()
    return HttpResponse(body, content_type=content_type)


def healthz_live(request: HttpRequest) -> JsonResponse:  # noqa: ARG001
    """200 whenever this process answers: it touches nothing else."""
    return JsonResponse({"ok": True})


def healthz_ready(request: HttpRequest) -> JsonResponse:  # noqa: ARG001
    """200 when a battle sent now is answered at warm speed; else 503, saying what the arena
    waits for. Only the parts' states: no names, versions or errors."""
    report = ready_report()
    body = {"ok": report["ok"], "starting": report["starting"], "detail": report["detail"],
            **{name: {"ok": part["ok"]} for name, part in report["parts"].items()}}
    return JsonResponse(body, status=200 if report["ok"] else 503)


def bad_request(request: HttpRequest, exception=None):
    """Django's own 400s (a body past the size limit outside the API, a header it refuses)."""
    if wants_json(request):
        return JsonResponse({"detail": "The request could not be read: check its headers and "
                                       "body."}, status=400)
    return render(request, "400.html", status=400)


def permission_denied(request: HttpRequest, exception=None):
    if wants_json(request):
        return JsonResponse({"detail": "You may not do this."}, status=403)
    return render(request, "403.html", status=403)


def login_locked(request: HttpRequest, original_response=None, credentials=None):  # noqa: ARG001
    """django-axes' answer to a locked-out login (``AXES_LOCKOUT_CALLABLE``): a 429 page and
    ``Retry-After``, the whole cool-off, since the attempt that got here started it over."""
    cool_off = get_cool_off(request)
    response = render(request, "arena/login_locked.html", {"cooloff_timedelta": cool_off},
                      status=429)
    response["Retry-After"] = str(max(1, int(cool_off.total_seconds())))
    return response


def csrf_failure(request: HttpRequest, reason: str = ""):
    """A form posted without its page's token (an old tab, blocked cookies)."""
    if wants_json(request):
        return JsonResponse({"detail": "The CSRF check failed: load the page again and "
                                       "resend."}, status=403)
    return render(request, "403.html", {"csrf": True}, status=403)


def page_not_found(request: HttpRequest, exception=None):
    if wants_json(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return render(request, "404.html", status=404)


OUTAGE_RETRY_SECONDS = 10
OUTAGE = ("The arena is temporarily unavailable (its {part} does not answer). Everything "
          "already saved is kept: try again in a few seconds.")


def _outage(exc: BaseException | None) -> str | None:
    """Which backing service an exception says is down (as the answer names it), or None."""
    if isinstance(exc, OperationalError | InterfaceError):
        return "database"
    if isinstance(exc, RedisConnectionError | RedisTimeout | BrokerError):
        return "queue and cache (Redis)"
    return None


def server_error(request: HttpRequest):
    """A 500, or a 503 with Retry-After when the error was a database or Redis outage (a
    database error rolled the request's transaction back; what was committed is kept)."""
    part = _outage(sys.exc_info()[1])
    if part is not None:
        message = OUTAGE.format(part=part)
        response = (JsonResponse({"detail": message}, status=503) if wants_json(request)
                    else render(request, "500.html", {"outage": message}, status=503))
        response["Retry-After"] = str(OUTAGE_RETRY_SECONDS)
        return response
    if wants_json(request):
        return JsonResponse({"detail": "Internal server error."}, status=500)
    return render(request, "500.html", status=500)


@csrf_exempt
@require_POST
def csp_report(request: HttpRequest) -> HttpResponse:
    """A browser reports what the Content-Security-Policy blocked: logged, one line each."""
    try:
        visitor_limit(request, action="csp_report", limit=CSP_REPORTS_PER_MINUTE)
        report = json.loads(request.body).get("csp-report")
    except RuleError as exc:
        return JsonResponse({"detail": exc.message}, status=exc.status)
    except (ValueError, AttributeError):
        report = None
    if not isinstance(report, dict):
        return JsonResponse({"detail": 'Send a CSP report: {"csp-report": {...}}.'}, status=400)
    logger.warning("CSP blocked %r (%r) on %r", str(report.get("blocked-uri", ""))[:300],
                   str(report.get("violated-directive", ""))[:100],
                   str(report.get("document-uri", ""))[:300])
    return HttpResponse(status=204)

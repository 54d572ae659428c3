"""Core pages: home, health, error pages."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.shortcuts import render

from arena.health import health_report


def home(request: HttpRequest):
    """What each mode is, in one line, with the arena's live figures."""
    from arena.modes import Figure, home_figures, modes
    from arena.selectors import model_list_available

    sections = [(mode, home_figures(mode) if mode.is_open else []) for mode in modes()]
    # Models that can battle now (cached probes), not every entry of the models file.
    figures = [Figure("models ready", len(model_list_available()))]
    figures += [figure for _, mode_figures in sections for figure in mode_figures]
    return render(request, "arena/home.html", {"sections": sections, "figures": figures})


def healthz(request: HttpRequest) -> JsonResponse:
    report = health_report()
    essential = report["database"]["ok"] and report["redis"]["ok"]
    return JsonResponse(report, status=200 if essential else 503)


def page_not_found(request: HttpRequest, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return render(request, "404.html", status=404)


def server_error(request: HttpRequest):
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Internal server error."}, status=500)
    return render(request, "500.html", status=500)

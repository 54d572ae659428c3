"""Core pages: home, health, error pages."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.shortcuts import render

from arena.health import health_report


def home(request: HttpRequest):
    return render(request, "arena/home.html")


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

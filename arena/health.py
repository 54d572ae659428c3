"""Health checks for /healthz: live, ready, and the parts' states.

``/healthz/live`` answers whenever the process does. ``/healthz/ready`` answers 200 when the
arena can do the work now (:func:`ready_report`: database, Redis, a worker's heartbeat, the
local models started) and 503 naming what it waits for. ``/healthz``: everyone (a load
balancer every few seconds) gets the fast answer: can this process reach its database and
Redis, one round trip each. Staff, or a caller with ``ARENA_HEALTH_TOKEN``, get the detailed
one: the Celery workers (how many beat in the last few seconds) and every model
with why it cannot answer, which names the key variables it lacks. ``/api/health`` (seed
004's path) is the same answer, and ``ARENA_METRICS_TOKEN`` shows its details too."""

from __future__ import annotations

import hmac

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest

from arena.broker import broker_redis
from arena.readiness import local_models_state, workers_alive
from arena.selectors import model_list_with_availability


def check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"ok": True, "engine": connection.vendor}
    except Exception as exc:
        return {"ok": False, "error": type(exc).__name__}


def check_redis() -> dict:
    try:
        broker_redis().ping()
        return {"ok": True, "embedded": settings.EMBEDDED_REDIS}
    except Exception as exc:
        return {"ok": False, "embedded": settings.EMBEDDED_REDIS, "error": type(exc).__name__}


def check_worker() -> dict:
    """How many workers beat in the last few seconds (:mod:`arena.readiness`)."""
    try:
        alive = workers_alive()
    except redis.RedisError as exc:
        return {"ok": False, "workers": 0, "error": type(exc).__name__}
    return {"ok": alive > 0, "workers": alive}


def check_models() -> dict:
    rows = model_list_with_availability()
    return {
        "ok": any(avail.available for _, avail in rows),
        "available": sum(1 for _, avail in rows if avail.available),
        "models": {
            model.slug: {"available": avail.available, "reason": avail.reason}
            for model, avail in rows
        },
    }


def bearer_holds(request: HttpRequest, token: str) -> bool:
    """The request says ``Authorization: Bearer <token>`` with this (non-empty) token."""
    sent = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    return bool(token and sent and hmac.compare_digest(sent.encode(), token.encode()))


def may_see_details(request: HttpRequest) -> bool:
    """Staff, or a bearer of ``ARENA_HEALTH_TOKEN`` or ``ARENA_METRICS_TOKEN``."""
    if any(bearer_holds(request, token)
           for token in (settings.ARENA_HEALTH_TOKEN, settings.ARENA_METRICS_TOKEN)):
        return True
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated and user.is_staff)


def health_report(*, detailed: bool = False) -> dict:
    """The parts' states; ``ok`` is whether they all are. Without ``detailed``: database and
    Redis only, their names and errors left out."""
    report = {"database": check_database(), "redis": check_redis()}
    if detailed:
        report["worker"] = (check_worker() if report["redis"]["ok"]
                            else {"ok": False, "workers": 0})
        report["models"] = check_models() if report["database"]["ok"] else {"ok": False}
    else:
        report = {name: {"ok": part["ok"]} for name, part in report.items()}
    report["ok"] = all(part["ok"] for part in report.values())
    return report


# What each part is called when the page or the run command says what it waits for.
STARTING_NAMES = {
    "database": "the database",
    "redis": "Redis (the queue)",
    "workers": "the workers that run the models",
    "local_models": "the local models",
}
WAITING_FOR = ("The arena is waiting for {parts} to be ready; a battle or debate you start now "
               "starts as soon as they are.")


def ready_report() -> dict:
    """``{"ok", "parts": {name: {"ok", ...}}, "starting": [names], "detail"}``: whether a
    battle sent now is answered at warm speed, and if not, what it waits for."""
    parts = {"database": check_database(), "redis": check_redis()}
    parts["workers"] = check_worker() if parts["redis"]["ok"] else {"ok": False, "workers": 0}
    state = local_models_state()
    parts["local_models"] = {"ok": state != "starting", "state": state}
    starting = [name for name, part in parts.items() if not part["ok"]]
    detail = (WAITING_FOR.format(parts=", ".join(STARTING_NAMES[name] for name in starting))
              if starting else "The arena is ready.")
    return {"ok": not starting, "parts": parts, "starting": starting, "detail": detail}

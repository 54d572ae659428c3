"""Health checks for /healthz: database, Redis, Celery worker, models."""

from __future__ import annotations

from django.conf import settings
from django.db import connection


def check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"ok": True, "engine": connection.vendor}
    except Exception as exc:
        return {"ok": False, "error": type(exc).__name__}


def check_redis() -> dict:
    import redis

    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1,
                                      socket_timeout=1)
        client.ping()
        return {"ok": True, "embedded": settings.EMBEDDED_REDIS}
    except Exception as exc:
        return {"ok": False, "embedded": settings.EMBEDDED_REDIS, "error": type(exc).__name__}


def check_worker() -> dict:
    from arena.celery import app

    try:
        replies = app.control.ping(timeout=1.0)
    except Exception as exc:
        return {"ok": False, "workers": 0, "error": type(exc).__name__}
    return {"ok": bool(replies), "workers": len(replies)}


def check_models() -> dict:
    from arena.selectors import model_list_with_availability

    rows = model_list_with_availability()
    return {
        "ok": any(avail.available for _, avail in rows),
        "available": sum(1 for _, avail in rows if avail.available),
        "models": {
            model.slug: {"available": avail.available, "reason": avail.reason}
            for model, avail in rows
        },
    }


def health_report() -> dict:
    report = {
        "database": check_database(),
        "redis": check_redis(),
    }
    report["worker"] = check_worker() if report["redis"]["ok"] else {"ok": False, "workers": 0}
    report["models"] = check_models() if report["database"]["ok"] else {"ok": False}
    report["ok"] = all(part["ok"] for part in report.values())
    return report

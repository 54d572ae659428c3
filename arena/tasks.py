"""Celery tasks of the platform."""

from celery import shared_task


@shared_task(ignore_result=True)
def steps_requeue_stale() -> int:
    from arena.steps import step_requeue_stale

    return step_requeue_stale()


@shared_task(ignore_result=True)
def sessions_clear_expired() -> None:
    """Django's ``clearsessions``: session rows past their expiry go; then what expired
    anonymous visitors left behind is cleaned and anonymised (accounts.deletion)."""
    from django.core.management import call_command
    from django.utils.module_loading import import_string

    call_command("clearsessions")
    import_string("accounts.deletion.orphans_clean")()


@shared_task(ignore_result=True)
def votes_integrity_sweep() -> dict:
    """Every mode's vote-integrity sweep (:mod:`arena.contests.counting`)."""
    from arena.contests.counting import sweep_all

    return sweep_all()


@shared_task(ignore_result=True)
def alerts_evaluate() -> dict:
    """Every alert rule, every ARENA_ALERT_INTERVAL_SECONDS (:mod:`arena.alerts`)."""
    from arena.alerts.services import alerts_evaluate as evaluate

    result = evaluate()
    return {"raised": len(result.raised), "cleared": len(result.cleared),
            "failed_rules": result.failed_rules}


@shared_task(ignore_result=True)
def alert_deliver(alert_id: int) -> None:
    """An event's notice (a failed debate), sent once its row is committed."""
    from arena.alerts.services import alert_deliver as deliver

    deliver(alert_id=alert_id)

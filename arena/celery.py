"""The Celery application: Redis broker and results, tasks found in every app."""

import os

from celery import Celery, signals

from arena.llm import load_client

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
_heartbeat = None


@signals.worker_init.connect
def load_what_tasks_call(**kwargs) -> None:
    """A worker calls the models: it loads the provider SDKs (about 5 s of CPU here) before
    it takes tasks, not in the first task's threads while answers wait. Web processes never
    load them (arena.llm loads its client on first use)."""
    load_client()


@signals.worker_ready.connect
def start_heartbeat(sender, **kwargs) -> None:
    """From now on, until it stops, this worker tells readiness it consumes the queue."""
    from arena.readiness import WorkerHeartbeat  # noqa: PLC0415 - a worker's only

    global _heartbeat
    _heartbeat = WorkerHeartbeat(sender.hostname).start()


@signals.worker_shutdown.connect
def stop_heartbeat(**kwargs) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()

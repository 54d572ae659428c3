"""The Celery application: Redis broker and results, tasks found in every app."""

import os

from celery import Celery, signals

from arena.broker import mend_redis_channel_close
from arena.llm import load_client

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
mend_redis_channel_close()  # a worker survives a Redis that died under it


@signals.worker_init.connect
def load_what_tasks_call(**kwargs) -> None:
    """A worker calls the models: it loads the provider SDKs (about 5 s of CPU here) before
    it takes tasks, not in the first task's threads while answers wait. Web processes never
    load them (arena.llm loads its client on first use)."""
    load_client()

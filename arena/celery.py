"""The Celery application: Redis broker and results, tasks found in every app, the beat
schedule of the platform (settings.CELERY_BEAT_SCHEDULE) and of every mode.

Only the processes that send or run tasks import it (``celery -A arena`` finds it here):
``django.setup()`` does not, so a command that sends nothing loads no Celery."""

import logging
import os
import threading
from importlib import import_module

from celery import Celery, signals
from django.db import connection
from django.utils.module_loading import module_has_submodule

from arena import heap
from arena.broker import mend_redis_channel_close
from arena.llm import load_client
from arena.logs import request_id_to_headers, task_request_id_end, task_request_id_start
from arena.modes import beat_schedule

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
# Celery's Django fixup runs Django's system checks as a worker or beat starts and throws
# the result away; the checks import every URL module (3 s of CPU here). `manage.py check
# --deploy` is where they count (the suite runs it).
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
mend_redis_channel_close()  # a worker survives a Redis that died under it
_heartbeat = None
# Threads a worker starts, and their database connections, before it says it is ready: half a
# burst of 100 battles' answers (each of the run command's two workers takes about half).
WARM_THREADS = 128
WARM_THREADS_SECONDS = 60
_in_beat = False  # this process is celery beat: every task it sends is a scheduled one
logger = logging.getLogger(__name__)


@app.on_after_finalize.connect
def add_the_modes_beat_entries(sender: Celery, **kwargs) -> None:
    """Each mode's periodic tasks join the platform's own. Beat and the worker finalize the
    app once Django is set up and the tasks are imported (its registry names the modes)."""
    sender.conf.beat_schedule = {**sender.conf.beat_schedule, **beat_schedule()}


@signals.setup_logging.connect
def keep_the_arenas_logging(loglevel=None, **kwargs) -> None:
    """Worker and beat log through the handler and format of the settings' LOGGING (set up
    by django.setup(): JSON lines when LOG_FORMAT=json), not Celery's own: connected, this
    receiver keeps Celery from replacing the root logger's handlers. The command's
    ``--loglevel`` still decides what the process logs, as it did."""
    if loglevel:
        logging.getLogger().setLevel(loglevel)


@signals.before_task_publish.connect
def carry_the_request_id(headers=None, **kwargs) -> None:
    """A task sent while serving a request (or running a task that one sent) carries its id."""
    request_id_to_headers(headers)


@signals.task_prerun.connect
def run_under_the_request_id(task=None, **kwargs) -> None:
    task_request_id_start(task)


@signals.task_postrun.connect
def forget_the_request_id(task=None, **kwargs) -> None:
    task_request_id_end(task)


@signals.worker_init.connect
def load_what_tasks_call(**kwargs) -> None:
    """A worker calls the models: it loads the provider SDKs (about 5 s of CPU here) and
    every app's steps (what its tasks run) before it takes tasks and says it is ready, not
    in the first battle's threads while its answers wait. Web processes never load them
    (arena.llm loads its client on first use; a tasks module loads its steps when it runs).

    No garbage collection while they load (:mod:`arena.heap`)."""
    from django.apps import apps  # noqa: PLC0415 - the registry is ready once a worker starts

    with heap.loading_to_keep():
        load_client()
        for config in apps.get_app_configs():
            if module_has_submodule(config.module, "steps"):
                import_module(f"{config.name}.steps")


@signals.worker_ready.connect
def start_heartbeat(sender, **kwargs) -> None:
    """From now on, until it stops, this worker tells readiness it consumes the queue."""
    from arena.readiness import WorkerHeartbeat  # noqa: PLC0415 - a worker's only

    open_thread_connections(sender.controller.pool)
    global _heartbeat
    _heartbeat = WorkerHeartbeat(sender.hostname).start()


def open_thread_connections(pool) -> None:
    """Start the pool's threads a burst would start, each with its database connection open,
    before the worker says it is ready: with SQLite a thread keeps its own (PostgreSQL's pool
    lends one per task instead, and this does nothing). Opened by the first burst's tasks, the
    connections cost it 2-3 ms of CPU each, while every answer waited (100 battles at once:
    0.6 s more worker CPU than the bursts after, 2.5 T instead of 2.2 T)."""
    executor = getattr(pool, "executor", None)  # the threads pool's
    if executor is None or connection.vendor != "sqlite":  # as arena.steps.release_database
        return
    count = min(WARM_THREADS, pool.limit)
    # Each waits for all the others, so that each is a thread of its own.
    everyone = threading.Barrier(count + 1, timeout=WARM_THREADS_SECONDS)

    def open_connection() -> None:
        try:
            connection.ensure_connection()  # a database that fails now fails the first task
        finally:
            everyone.wait()

    for _ in range(count):
        executor.submit(open_connection)
    try:
        everyone.wait()
    except threading.BrokenBarrierError:  # threads that did not start: the tasks start them
        logger.warning("the worker's threads did not all start within %d s",
                       WARM_THREADS_SECONDS)


@signals.worker_shutdown.connect
def stop_heartbeat(**kwargs) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()


@signals.beat_init.connect
def know_this_is_beat(**kwargs) -> None:
    global _in_beat
    _in_beat = True


@signals.before_task_publish.connect
def stamp_beat(**kwargs) -> None:
    """Beat says it is alive each time it sends a scheduled task (the operations page reads
    it). Stamped as beat sends, not by a task a worker runs, so a stopped worker does not
    make beat look late, nor a running one hide a stopped beat."""
    if not _in_beat:
        return
    import redis  # noqa: PLC0415 - beat's only

    from arena.readiness import beat_seen  # noqa: PLC0415

    try:
        beat_seen()
    except redis.RedisError:
        logger.warning("could not record that beat sent a task")

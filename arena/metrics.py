"""The arena's Prometheus metrics: what every process counts, and ``/metrics`` reading them all.

One node runs several processes (daphne, the Celery workers, beat, commands), so the metrics
are kept in prometheus-client's multiprocess mode: each process writes its values to files
under ``PROMETHEUS_MULTIPROC_DIR``, which the settings point at ``ARENA_VAR_DIR/metrics``
before any metric exists (the run command empties it at start) and a scrape sums the files of every
process (:func:`metrics_text`). A gauge counts live processes only (``livesum``): the run
command drops a dead process's gauge files (:func:`process_gone`).

What is counted, and where it is recorded (one call each):

* HTTP requests by route pattern, method and status, with a latency histogram:
  :class:`RequestMetrics`, the ASGI layer around everything (public answers repeated from
  memory included; the route comes from Django's resolver, :func:`route_seen`);
* model calls by provider and model: count by outcome, errors by kind, latency, time to first
  token, tokens and cost (:func:`model_call_done` / :func:`model_call_failed`, from
  :mod:`arena.llm.client`, the one way a model is called);
* steps by mode and kind: count by status, duration, queue wait (:mod:`arena.steps.runner`);
* open sockets by mode (:class:`RequestMetrics` for websockets);
* votes by mode (:func:`arena.contests.voting.vote_once`, the one way a vote is cast);
* debates started, completed, failed; voice calls by outcome and their turns' latency.

Labels never carry an id, a prompt or anything a visitor typed: a route is its pattern
(``api/battles/{battle_id}``), a model its slug.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from types import SimpleNamespace

SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
MODEL_SECONDS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0)
UNMATCHED = "(unmatched)"  # a path no route serves (a 404): one label for all of them


@functools.cache
def _metrics() -> SimpleNamespace:
    """The metrics, made at the first one recorded: prometheus-client (0.1 s to import) is
    loaded by the processes that count, never by ``django.setup()``."""
    from prometheus_client import Counter, Gauge, Histogram  # noqa: PLC0415

    model = ["provider", "model"]
    step = ["mode", "kind"]
    return SimpleNamespace(
        http_requests=Counter("arena_http_requests", "HTTP requests answered",
                              ["route", "method", "status"]),
        http_seconds=Histogram("arena_http_request_seconds", "Time to answer an HTTP request",
                               ["route", "method"], buckets=SECONDS),
        model_calls=Counter("arena_model_calls", "Model calls by outcome", [*model, "outcome"]),
        model_errors=Counter("arena_model_errors", "Failed model calls by kind of error",
                             [*model, "kind"]),
        model_seconds=Histogram("arena_model_call_seconds", "A model call's latency", model,
                                buckets=MODEL_SECONDS),
        model_ttft=Histogram("arena_model_first_token_seconds",
                             "Time to a streamed call's first token", model,
                             buckets=MODEL_SECONDS),
        model_tokens=Counter("arena_model_tokens", "Tokens read and written by models",
                             [*model, "direction"]),
        model_cost=Counter("arena_model_cost_usd", "What model calls cost (prices × tokens)",
                           model),
        steps=Counter("arena_steps", "Steps run by workers, by how they ended",
                      [*step, "status"]),
        step_seconds=Histogram("arena_step_seconds", "A step's work, from claim to save", step,
                               buckets=SECONDS),
        step_wait=Histogram("arena_step_queue_wait_seconds",
                            "From a step's job being due to a worker starting it", step,
                            buckets=SECONDS),
        open_sockets=Gauge("arena_open_sockets", "Websockets open now", ["mode"],
                           multiprocess_mode="livesum"),
        votes=Counter("arena_votes", "Votes cast", ["mode"]),
        debates=Counter("arena_debates", "Debates by what happened to them", ["event"]),
        voice_calls=Counter("arena_voice_calls", "Voice calls by how they ended", ["outcome"]),
        voice_latency=Histogram("arena_voice_turn_latency_seconds",
                                "From the caller's end of turn to the agent's first audio",
                                buckets=SECONDS),
    )


# -- recording ------------------------------------------------------------------------------

def model_call_done(endpoint, completion) -> None:  # noqa: ANN001 - arena.llm types
    m, labels = _metrics(), _model_labels(endpoint)
    m.model_calls.labels(*labels, "ok").inc()
    m.model_seconds.labels(*labels).observe(completion.latency_ms / 1000)
    if completion.ttft_ms is not None:
        m.model_ttft.labels(*labels).observe(completion.ttft_ms / 1000)
    m.model_tokens.labels(*labels, "input").inc(completion.input_tokens)
    m.model_tokens.labels(*labels, "output").inc(completion.output_tokens)
    m.model_cost.labels(*labels).inc(completion.cost_usd)


def model_call_failed(endpoint, error) -> None:  # noqa: ANN001 - arena.llm types
    m, labels = _metrics(), _model_labels(endpoint)
    m.model_calls.labels(*labels, "failed").inc()
    m.model_errors.labels(*labels, type(error).__name__).inc()


def _model_labels(endpoint) -> tuple[str, str]:  # noqa: ANN001
    return endpoint.provider or endpoint.provider_kind, endpoint.slug


def step_done(model, status: str, *, seconds: float, waited: float | None) -> None:  # noqa: ANN001
    """A step's work ended (``done``, ``failed``, or ``taken`` from its job)."""
    m, labels = _metrics(), (model._meta.app_label, model.__name__)
    m.steps.labels(*labels, status).inc()
    m.step_seconds.labels(*labels).observe(seconds)
    if waited is not None:
        m.step_wait.labels(*labels).observe(max(0.0, waited))


def vote_cast(vote) -> None:  # noqa: ANN001 - a mode's vote row
    _metrics().votes.labels(type(vote)._meta.app_label).inc()


def debate_event(event: str) -> None:
    """``started``, ``completed`` or ``failed``."""
    _metrics().debates.labels(event).inc()


def voice_call_ended(outcome: str, latencies_ms: list[float]) -> None:
    m = _metrics()
    m.voice_calls.labels(outcome).inc()
    for latency in latencies_ms:
        m.voice_latency.observe(latency / 1000)


# -- the ASGI layer -------------------------------------------------------------------------

ROUTE_KEY = "arena.route"  # where Django's resolver leaves the route pattern in the scope


def route_seen(request) -> None:  # noqa: ANN001 - an HttpRequest
    """Called by Django once a request is resolved: its route pattern for the labels."""
    scope = getattr(request, "scope", None)
    match = getattr(request, "resolver_match", None)
    if scope is not None and match is not None:
        scope[ROUTE_KEY] = match.route or match.view_name or UNMATCHED


def socket_mode(path: str) -> str:
    """``/ws/battles/<id>/`` → ``battles``; a voice call's ``…/agent-stream`` → ``voice``."""
    parts = [p for p in path.split("/") if p]
    if parts and parts[-1] == "agent-stream":
        return "voice"
    return parts[1] if len(parts) > 1 and parts[0] == "ws" else UNMATCHED


CLIENT_GONE = 499  # a request whose client left before any answer (nginx's code)


class RequestMetrics:
    """ASGI middleware around the whole application: each HTTP request counted and timed from
    its start to its last byte, each websocket counted while open."""

    def __init__(self, app) -> None:  # noqa: ANN001
        self.app = app

    async def __call__(self, scope, receive, send):  # noqa: ANN001, ANN204
        if scope["type"] == "websocket":
            return await self._socket(scope, receive, send)
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        # Until an answer starts: the client went away (Django stops a request whose client
        # disconnected and answers nothing), nginx's 499; an application that raised, 500.
        status = [CLIENT_GONE]

        async def seen(message):  # noqa: ANN001, ANN202
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, seen)
        except BaseException:
            if status[0] == CLIENT_GONE:
                status[0] = 500
            raise
        finally:
            m, route, method = _metrics(), scope.get(ROUTE_KEY, UNMATCHED), scope["method"]
            m.http_requests.labels(route, method, str(status[0])).inc()
            m.http_seconds.labels(route, method).observe(time.perf_counter() - started)

    async def _socket(self, scope, receive, send):  # noqa: ANN001, ANN202
        mode = socket_mode(scope.get("path", ""))
        gauge = _metrics().open_sockets.labels(mode)
        gauge.inc()
        try:
            return await self.app(scope, receive, send)
        finally:
            gauge.dec()


# -- reading --------------------------------------------------------------------------------

def metrics_text() -> tuple[bytes, str]:
    """Every process's metrics on this node, summed, in Prometheus's text format."""
    from prometheus_client import (  # noqa: PLC0415
        CONTENT_TYPE_LATEST,
        CollectorRegistry,
        generate_latest,
        multiprocess,
    )

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry), CONTENT_TYPE_LATEST


def metrics_folder() -> Path:
    from django.conf import settings  # noqa: PLC0415

    return Path(settings.METRICS_DIR)


def start_afresh() -> None:
    """Empty the metrics folder: a new run of the arena on this node (the run command, before
    it starts any process) begins at zero, as the multiprocess mode requires."""
    folder = metrics_folder()
    folder.mkdir(parents=True, exist_ok=True)
    for path in folder.glob("*.db"):
        path.unlink(missing_ok=True)


def process_gone(pid: int) -> None:
    """A process of this node ended: its open sockets are no longer counted."""
    from prometheus_client import multiprocess  # noqa: PLC0415

    multiprocess.mark_process_dead(pid, str(metrics_folder()))

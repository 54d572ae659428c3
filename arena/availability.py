"""Is a model usable right now, and if not, why not.

A model is available when it is active, still listed in the models file, its
local files are in place (local models), its key variable is set (hosted
models) and its endpoint answers. Endpoint probes are cached for
``ARENA_PING_CACHE_SECONDS`` so pages and the API stay fast.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings
from django.core.cache import cache

from arena.api_keys import key_source, missing_key_message
from arena.local_models import base_url_for, local_model_status, probe
from arena.local_models.specs import alias_for, configured_port, port_for, read_instance
from arena.models import AIModel, ModelStatus, ProviderKind

logger = logging.getLogger(__name__)

READY = "ready"
NOT_PROBED = "configured (endpoint not probed; use --ping)"


@dataclass(frozen=True)
class Availability:
    available: bool
    reason: str


def model_base_url(model: AIModel) -> str:
    if model.is_local:
        return base_url_for(model.local_key)
    if model.provider_kind == ProviderKind.ANTHROPIC and not model.base_url:
        return "https://api.anthropic.com"
    return model.base_url


def model_static_problem(model: AIModel) -> str | None:
    """Why the model cannot be used, from configuration alone (no network)."""
    if model.is_local and not settings.ARENA_LOCAL_MODELS:
        return "local models are turned off (ARENA_LOCAL_MODELS=0)"
    if not model.in_models_file:
        return "no longer listed in the models file"
    if model.status != ModelStatus.ACTIVE:
        return f"status is {model.status}"
    if model.is_local:
        status = local_model_status(model.local_key)
        if not status.available:
            return status.reason
    if model.api_key_env and not key_source(model.api_key_env):
        return missing_key_message(model.api_key_env)
    return cost_problem(model)


AWAITS_APPROVAL = ("waits for staff approval: its output costs ${price}/M tokens, above "
                   "ARENA_APPROVAL_PRICE")
BUDGET_SPENT = ("has spent its budget for today (${spent:.2f}, ${cap:.2f} a day per endpoint); "
                "back tomorrow (UTC)")


def cost_problem(model: AIModel) -> str | None:
    """Why the model is left out for its cost: priced above the approval line and not yet
    approved, or its daily budget spent (every mode together, arena.llm.ledger)."""
    from arena.llm.ledger import spent_today  # noqa: PLC0415
    from arena.llm.types import FALLBACK, OWN  # noqa: PLC0415
    from arena.selectors import model_daily_cap  # noqa: PLC0415

    line = settings.ARENA_APPROVAL_PRICE
    if line and float(model.output_price_per_million) > line and model.approved_at is None:
        return AWAITS_APPROVAL.format(price=f"{float(model.output_price_per_million):g}")
    cap = model_daily_cap(model)
    endpoints = (OWN, FALLBACK) if model.fallback_base_url else (OWN,)
    if cap > 0 and all(spent_today(model.slug, served_by=e) >= cap for e in endpoints):
        return BUDGET_SPENT.format(spent=spent_today(model.slug), cap=cap)
    return None


def model_availability(model: AIModel, *, ping: bool = True) -> Availability:
    problem = model_static_problem(model)
    if problem:
        return Availability(False, problem)
    if not ping:
        return Availability(True, NOT_PROBED)
    if model.is_local:
        return _local_server_availability(model)
    reachable, why = endpoint_probe(model_base_url(model), kind=model.provider_kind)
    if not reachable:
        return Availability(False, f"endpoint unreachable: {why}")
    return Availability(True, READY)


NOT_RUNNING = ("local model server is not running or still loading "
               "(the run command starts it)")
NOT_OURS = "port {port} answers, but not with this arena's model server (another arena's?)"


def _local_server_availability(model: AIModel) -> Availability:
    """A local server counts only once its model is loaded (llama.cpp's /health is 200) and
    it is this arena's own: it reports the model under this arena's instance token."""
    record = read_instance()
    if record is None and not configured_port(model.local_key):
        return Availability(False, NOT_RUNNING)
    base_url = model_base_url(model)
    expected = alias_for(model.local_key, record["token"] if record else None)
    key = "probe-local:" + hashlib.sha256(f"{base_url}|{expected}".encode()).hexdigest()[:32]
    state = _cached_probe(
        key,
        lambda: "down" if not probe(base_url, timeout=1.0) else (
            "ours" if expected in _served_models(base_url) else "foreign"),
        ttl=lambda found: settings.ARENA_PING_CACHE_SECONDS if found == "ours" else 3)
    if state == "ours":
        return Availability(True, READY)
    if state == "foreign":
        return Availability(False, NOT_OURS.format(port=port_for(model.local_key)))
    return Availability(False, NOT_RUNNING)


def _served_models(base_url: str) -> set[str]:
    """The model names an OpenAI-compatible server reports (``GET /models``)."""
    try:
        payload = httpx.get(f"{base_url}/models", timeout=2.0).json()
        return {str(m.get("id")) for m in payload.get("data", []) if isinstance(m, dict)}
    except (httpx.HTTPError, ValueError, AttributeError):
        return set()


_probes = ThreadPoolExecutor(max_workers=8, thread_name_prefix="arena-probe")


def models_availability(models: list[AIModel], *, ping: bool = True) -> dict[str, Availability]:
    """Availability of many models, probing their endpoints concurrently (one shared pool of
    threads: starting threads per call cost more than the cached answers)."""
    if not models:
        return {}
    results = _probes.map(lambda m: model_availability(m, ping=ping), models)
    return {model.slug: result for model, result in zip(models, results, strict=True)}


# One probe per endpoint at a time in a process: when the cached answer expires under a
# burst, the first request probes and the others wait for its answer (a hundred concurrent
# requests each probing, each with an HTTP client of its own, cost more than the battles).
_in_flight: dict[str, threading.Lock] = {}
_in_flight_guard = threading.Lock()
_probe_client: httpx.Client | None = None  # made on first use (its TLS setup costs ~30 ms)


def _client() -> httpx.Client:
    global _probe_client
    with _in_flight_guard:
        if _probe_client is None:
            _probe_client = httpx.Client(timeout=httpx.Timeout(3.0, connect=1.5))
        return _probe_client


def _single_flight(key: str) -> threading.Lock:
    with _in_flight_guard:
        return _in_flight.setdefault(key, threading.Lock())


def _cached_probe(key: str, probe: Callable[[], Any], *, ttl: Callable[[Any], int],
                  fresh: bool = False) -> Any:
    """The cached answer of ``probe``, which runs at most once at a time per key here."""
    if not fresh and (cached := _cache_get(key)) is not None:
        return cached
    with _single_flight(key):
        if not fresh and (cached := _cache_get(key)) is not None:
            return cached  # probed by another request meanwhile
        found = probe()
        _cache_set(key, found, ttl(found))
    return found


def endpoint_probe(base_url: str, *, kind: str, fresh: bool = False) -> tuple[bool, str]:
    """Does anything answer HTTP at this endpoint? Any status code counts as reachable."""
    key = "probe:" + hashlib.sha256(f"{kind}|{base_url}".encode()).hexdigest()[:32]
    url = base_url.rstrip("/") + ("/v1/models" if kind == ProviderKind.ANTHROPIC else "/models")

    def probe() -> list:
        try:
            _client().get(url)
            return [True, READY]
        except httpx.TimeoutException:
            return [False, "no answer within 3 s"]
        except httpx.HTTPError as exc:
            return [False, _describe_http_error(exc)]

    return tuple(_cached_probe(key, probe, ttl=lambda _found: settings.ARENA_PING_CACHE_SECONDS,
                               fresh=fresh))


def _describe_http_error(exc: httpx.HTTPError) -> str:
    text = str(exc) or type(exc).__name__
    if "Connection refused" in text or "Errno 111" in text:
        return "connection refused"
    if "Name or service not known" in text or "Temporary failure in name resolution" in text:
        return "host name does not resolve"
    return text.splitlines()[0][:160]


def _cache_get(key: str):
    try:
        return cache.get(key)
    except Exception:  # the cache is an optimisation; Redis being down must not hide models
        logger.warning("cache unavailable while reading %s", key)
        return None


def _cache_set(key: str, value, timeout: int) -> None:
    try:
        cache.set(key, value, timeout)
    except Exception:
        logger.warning("cache unavailable while writing %s", key)

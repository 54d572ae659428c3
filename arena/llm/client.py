"""One async interface to chat models: :func:`stream_chat` and :func:`complete_chat`.

Settings (all optional, read per call with these defaults):

* ``ARENA_LLM_TIMEOUTS`` – dict with any of ``connect`` (5), ``read`` (30), ``write`` (5),
  ``pool`` (5) seconds.
* ``ARENA_LLM_MAX_ATTEMPTS`` – attempts in total, default 3.
* ``ARENA_LLM_BACKOFF_BASE`` – seconds, default 1.0; the wait before retry n (n = 1, 2, ...)
  is ``base * 2 ** (n - 1)`` capped at ``ARENA_LLM_BACKOFF_MAX`` (default 4.0): 1 s, 2 s, 4 s.

Retries happen on retryable errors only (see :mod:`arena.llm.errors`). If a streamed attempt
had already delivered text through ``on_delta`` and is retried, ``on_restart()`` is called before
the next attempt so the caller can discard the partial text; the final Completion holds only the
text of the successful attempt. Exceptions raised by the callbacks propagate unchanged.

If a provider reports no token usage, the counts are estimated with
:func:`arena.llm.types.estimate_tokens` (characters / 4, system prompt included for input) and
``Completion.usage_estimated`` is True.

The API key is read from the environment (``endpoint.api_key_env`` or its alias,
:mod:`arena.api_keys`) at call time and never logged; errors carry scrubbed details and no
chained SDK exception.
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import logging
import time
from types import ModuleType
from typing import Any

from django.conf import settings

from arena import aio, metrics
from arena.api_keys import api_key, missing_key_message
from arena.llm import anthropic_provider, ledger, openai_provider, pace
from arena.llm.classify import classify
from arena.llm.errors import (
    LLMAuthError,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMMalformedResponse,
    LLMOverBudget,
    LLMRateLimited,
    LLMServerError,
    LLMTimeout,
)
from arena.llm.types import (
    FALLBACK,
    OWN,
    AttemptState,
    CallbackFailed,
    ChatMessage,
    Completion,
    DeltaCallback,
    JsonOutput,
    ModelEndpoint,
    RestartCallback,
    call_maybe_async,
    estimate_tokens,
)

logger = logging.getLogger("arena.llm")

DEFAULT_TIMEOUTS: dict[str, float] = {"connect": 5.0, "read": 30.0, "write": 5.0, "pool": 5.0}
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_BASE = 1.0
DEFAULT_BACKOFF_MAX = 4.0
# Sent when an endpoint needs no key (api_key_env is None), e.g. a local OpenAI-compatible
# server. Passing a placeholder stops the SDKs from falling back to OPENAI_API_KEY etc.
NO_KEY_PLACEHOLDER = "no-key-configured"

_PROVIDERS: dict[str, ModuleType] = {
    "openai": openai_provider,
    "anthropic": anthropic_provider,
}


def _setting(name: str, default: Any) -> Any:
    if not settings.configured:
        return default
    return getattr(settings, name, default)


def llm_timeouts() -> dict[str, float]:
    configured = _setting("ARENA_LLM_TIMEOUTS", None) or {}
    unknown = set(configured) - set(DEFAULT_TIMEOUTS)
    if unknown:
        raise LLMConfigError(f"ARENA_LLM_TIMEOUTS has unknown keys: {sorted(unknown)}")
    return {**DEFAULT_TIMEOUTS, **{k: float(v) for k, v in configured.items()}}


def max_attempts() -> int:
    return max(1, int(_setting("ARENA_LLM_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS)))


def backoff_delay(retry_number: int) -> float:
    """Seconds to wait before retry ``retry_number`` (1 = the wait after the first failure)."""
    base = float(_setting("ARENA_LLM_BACKOFF_BASE", DEFAULT_BACKOFF_BASE))
    cap = float(_setting("ARENA_LLM_BACKOFF_MAX", DEFAULT_BACKOFF_MAX))
    return min(base * 2 ** (retry_number - 1), cap)


def read_api_key(endpoint: ModelEndpoint) -> str:
    if not endpoint.api_key_env:
        return NO_KEY_PLACEHOLDER
    key = api_key(endpoint.api_key_env)
    if not key:
        raise LLMConfigError(missing_key_message(endpoint.api_key_env))
    return key


def _check_messages(messages: list[ChatMessage]) -> list[ChatMessage]:
    if not messages:
        raise ValueError("messages must not be empty")
    for message in messages:
        if message.get("role") not in ("user", "assistant"):
            raise ValueError(f"message role must be 'user' or 'assistant', not {message!r:.60}")
        if not isinstance(message.get("content"), str):
            raise ValueError("message content must be a string")
    return list(messages)


# Clients kept on the arena's I/O loop (arena.aio), one per provider endpoint, key and
# timeouts: creating one costs a scan of the environment for proxies, and a kept client
# keeps its connections to the provider alive between calls.
_shared_clients: dict[tuple, Any] = {}


def _client_for(provider: ModuleType, endpoint: ModelEndpoint, api_key: str,
                timeouts: dict[str, float]) -> tuple[Any, bool]:
    """A client for this call, and whether it is shared (then it is not closed after)."""
    if not aio.on_background_loop():
        return provider.make_client(endpoint, api_key, timeouts), False
    key = (endpoint.provider_kind, endpoint.base_url, api_key, tuple(sorted(timeouts.items())))
    client = _shared_clients.get(key)
    if client is None:
        if not _shared_clients:
            atexit.register(_close_shared_clients)
        client = _shared_clients[key] = provider.make_client(endpoint, api_key, timeouts)
    return client, True


def _close_shared_clients() -> None:
    """Close the kept clients on their loop as the process exits: their connections are shut
    cleanly (and aiohttp does not log every one it finds open)."""
    clients = list(_shared_clients.values())
    _shared_clients.clear()

    async def close_all() -> None:
        await asyncio.wait_for(asyncio.gather(*(c.close() for c in clients),
                                              return_exceptions=True), timeout=5)

    try:
        aio.run(close_all())
    except Exception:  # the process is going anyway
        logger.debug("kept LLM clients not closed at exit", exc_info=True)


def _provider(endpoint: ModelEndpoint) -> ModuleType:
    try:
        return _PROVIDERS[endpoint.provider_kind]
    except KeyError:
        raise LLMConfigError(
            f"unknown provider_kind {endpoint.provider_kind!r} for model {endpoint.slug}"
        ) from None


def _completion(
    endpoint: ModelEndpoint,
    messages: list[ChatMessage],
    state: AttemptState,
    attempt: int,
    *,
    stream: bool,
) -> Completion:
    finished_at = time.monotonic()
    text = state.text
    estimated = state.input_tokens is None or state.output_tokens is None
    input_tokens = state.input_tokens
    if input_tokens is None:
        prompt = endpoint.system_prompt + "".join(m["content"] for m in messages)
        input_tokens = estimate_tokens(prompt)
    output_tokens = state.output_tokens
    if output_tokens is None:
        output_tokens = estimate_tokens(text)
    cost = (
        input_tokens * endpoint.input_price_per_million
        + output_tokens * endpoint.output_price_per_million
    ) / 1_000_000
    ttft_ms = None
    if stream and state.first_delta_at is not None:
        ttft_ms = round((state.first_delta_at - state.started) * 1000)
    return Completion(
        text=text,
        latency_ms=round((finished_at - state.started) * 1000),
        ttft_ms=ttft_ms,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost,
        attempts=attempt,
        usage_estimated=estimated,
        cut_at_limit=state.cut_at_limit,
    )


async def _give_up(endpoint: ModelEndpoint, error: LLMError, attempt: int, *,
                   served_by: str) -> LLMError:
    error.attempts = attempt
    error.model_slug = endpoint.slug
    metrics.model_call_failed(endpoint, error)
    await ledger.record(endpoint, served_by=served_by, error=error)
    logger.error(
        "LLM call failed: model=%s attempts=%d error=%s status=%s detail=%s",
        endpoint.slug,
        attempt,
        type(error).__name__,
        error.status_code,
        error.detail,
    )
    return error


# What makes a model's fallback endpoint answer instead: its own provider failing (after the
# retries), refusing our key, missing one, or the model's budget spent. Not a request the
# provider refused as such (too long, malformed): another endpoint would refuse it too.
FALL_BACK_ON = (LLMTimeout, LLMConnectionError, LLMRateLimited, LLMServerError,
                LLMMalformedResponse, LLMAuthError, LLMConfigError, LLMOverBudget)


async def _call(
    endpoint: ModelEndpoint,
    messages: list[ChatMessage],
    *,
    stream: bool,
    on_delta: DeltaCallback | None = None,
    on_restart: RestartCallback | None = None,
    output: JsonOutput | None = None,
) -> Completion:
    """The model's own endpoint, within its daily budget; its fallback endpoint (if it has
    one) when that fails (:data:`FALL_BACK_ON`). Text already streamed from the failed
    endpoint is taken back first (``on_restart``)."""
    messages = _check_messages(messages)
    streamed = False

    async def delta(text: str) -> None:
        nonlocal streamed
        streamed = True
        await call_maybe_async(on_delta, text)

    try:
        return await _within_budget(endpoint, messages, stream=stream,
                                    on_delta=delta if on_delta else None,
                                    on_restart=on_restart, output=output, served_by=OWN)
    except LLMError as error:
        if endpoint.fallback is None or not isinstance(error, FALL_BACK_ON):
            raise
        logger.warning("LLM call: model=%s failed on its own endpoint (%s); asking its "
                       "fallback", endpoint.slug, type(error).__name__)
    if streamed and on_restart is not None:
        await call_maybe_async(on_restart)
    completion = await _within_budget(endpoint.fallback, messages, stream=stream,
                                      on_delta=on_delta, on_restart=on_restart, output=output,
                                      served_by=FALLBACK)
    return dataclasses.replace(completion, served_by=FALLBACK)


async def _within_budget(endpoint: ModelEndpoint, messages: list[ChatMessage], *,
                         served_by: str, **call) -> Completion:
    """The call, unless the model has spent its daily cap through this endpoint."""
    if endpoint.daily_spend_usd > 0:
        try:
            await aio.database_call(ledger.check_budget)(endpoint, served_by=served_by)
        except LLMOverBudget as error:
            error.model_slug = endpoint.slug
            logger.info("LLM call not made: %s", error.detail)
            raise
    return await _call_endpoint(endpoint, messages, served_by=served_by, **call)


async def _call_endpoint(
    endpoint: ModelEndpoint,
    messages: list[ChatMessage],
    *,
    stream: bool,
    on_delta: DeltaCallback | None,
    on_restart: RestartCallback | None,
    output: JsonOutput | None,
    served_by: str,
) -> Completion:
    if output is None:  # a JSON object is as long as its shape needs, and a grammar ends it
        endpoint = pace.paced(endpoint)
    try:
        provider = _provider(endpoint)
        api_key = read_api_key(endpoint)
        timeouts = llm_timeouts()
    except LLMConfigError as error:
        raise await _give_up(endpoint, error, 0, served_by=served_by) from None
    call_timeouts = pace.call_timeouts(endpoint, messages, timeouts)
    secrets = (api_key,)
    attempts_allowed = max_attempts()
    client, shared = _client_for(provider, endpoint, api_key, timeouts)
    try:
        for attempt in range(1, attempts_allowed + 1):
            state = AttemptState(on_delta=on_delta if stream else None)
            error: LLMError | None = None
            callback_error: BaseException | None = None
            try:
                await provider.run_attempt(
                    client, endpoint, messages, state, stream=stream, output=output,
                    timeouts=call_timeouts if call_timeouts != timeouts else None)
            except CallbackFailed as failed:
                callback_error = failed.original
            except Exception as exc:
                error = classify(exc, secrets)
                if error is None:
                    raise
            if callback_error is not None:
                raise callback_error
            if error is None:
                pace.observe(endpoint, state.timings)
                completion = _completion(endpoint, messages, state, attempt, stream=stream)
                logger.info(
                    "LLM call ok: model=%s stream=%s attempts=%d latency_ms=%d ttft_ms=%s "
                    "input_tokens=%d output_tokens=%d%s cost_usd=%.6f",
                    endpoint.slug,
                    stream,
                    attempt,
                    completion.latency_ms,
                    completion.ttft_ms,
                    completion.input_tokens,
                    completion.output_tokens,
                    " (estimated)" if completion.usage_estimated else "",
                    completion.cost_usd,
                )
                metrics.model_call_done(endpoint, completion)
                await ledger.record(endpoint, served_by=served_by, completion=completion)
                return completion
            if not error.retryable or attempt >= attempts_allowed:
                raise await _give_up(endpoint, error, attempt, served_by=served_by)
            wait = backoff_delay(attempt)
            logger.warning(
                "LLM call retry: model=%s attempt=%d/%d error=%s status=%s detail=%s "
                "retry_in=%.2fs",
                endpoint.slug,
                attempt,
                attempts_allowed,
                type(error).__name__,
                error.status_code,
                error.detail,
                wait,
            )
            if state.parts and on_restart is not None:
                await call_maybe_async(on_restart)
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        if not shared:
            await client.close()


async def stream_chat(
    endpoint: ModelEndpoint,
    messages: list[ChatMessage],
    *,
    on_delta: DeltaCallback | None = None,
    on_restart: RestartCallback | None = None,
) -> Completion:
    """Stream a reply; ``on_delta(text)`` gets each text delta (sync or async callable)."""
    return await _call(endpoint, messages, stream=True, on_delta=on_delta, on_restart=on_restart)


async def complete_chat(endpoint: ModelEndpoint, messages: list[ChatMessage], *,
                        output: JsonOutput | None = None) -> Completion:
    """Get a reply in one non-streaming request; with ``output``, the provider is asked for
    JSON satisfying its schema (see :func:`arena.llm.structured.complete_json`)."""
    return await _call(endpoint, messages, stream=False, output=output)

"""Map SDK / transport exceptions to the typed errors of :mod:`arena.llm.errors`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable

import anthropic
import httpx
import openai
import pydantic

from arena.llm.errors import (
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMMalformedResponse,
    LLMRateLimited,
    LLMRequestRejected,
    LLMServerError,
    LLMTimeout,
    scrub,
    status_error,
)

try:  # The anthropic SDK (>= 1.x) ships its own fork of httpx.
    import httpx2

    _TIMEOUTS: tuple[type[BaseException], ...] = (httpx.TimeoutException, httpx2.TimeoutException)
    _TRANSPORT: tuple[type[BaseException], ...] = (httpx.TransportError, httpx2.TransportError)
    _DECODING: tuple[type[BaseException], ...] = (httpx.DecodingError, httpx2.DecodingError)
    _HTTP: tuple[type[BaseException], ...] = (httpx.HTTPError, httpx2.HTTPError)
except ImportError:  # pragma: no cover - depends on the installed anthropic version
    _TIMEOUTS, _TRANSPORT, _DECODING, _HTTP = (
        (httpx.TimeoutException,),
        (httpx.TransportError,),
        (httpx.DecodingError,),
        (httpx.HTTPError,),
    )

_MAX_DETAIL = 500
_MID_STREAM = "The model provider reported an error in the middle of the answer."


def _error_type(body: object) -> str | None:
    """``error.type`` of an Anthropic-style error body (or of its inner ``error`` object)."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            return inner["type"]
        if isinstance(body.get("type"), str) and body.get("type") != "error":
            return body["type"]
    return None


def _in_stream_error(error_type: str | None, detail: str) -> LLMError:
    if error_type in ("rate_limit_error", "rate_limit_exceeded"):
        return LLMRateLimited(detail)
    if error_type in ("invalid_request_error", "authentication_error", "permission_error"):
        return LLMRequestRejected(detail)
    return LLMServerError(detail, user_message=_MID_STREAM)


def classify(exc: BaseException, secrets: Iterable[str | None] = ()) -> LLMError | None:
    """The typed error for ``exc``, or None if ``exc`` is not a provider or transport failure
    (a bug, a cancellation) and must propagate unchanged. The detail text is scrubbed."""
    if isinstance(exc, LLMError):
        return exc
    detail = scrub(f"{type(exc).__name__}: {exc}", secrets)[:_MAX_DETAIL]
    if isinstance(exc, openai.APITimeoutError | anthropic.APITimeoutError | asyncio.TimeoutError):
        return LLMTimeout(detail)
    if isinstance(exc, _TIMEOUTS):
        return LLMTimeout(detail)
    if isinstance(exc, openai.APIConnectionError | anthropic.APIConnectionError):
        return LLMConnectionError(detail)
    if isinstance(exc, (*_TRANSPORT, ConnectionError)):
        return LLMConnectionError(detail)
    malformed = (
        openai.APIResponseValidationError,
        anthropic.APIResponseValidationError,
        json.JSONDecodeError,
        UnicodeDecodeError,
        pydantic.ValidationError,
        *_DECODING,
    )
    if isinstance(exc, malformed):
        return LLMMalformedResponse(detail)
    if isinstance(exc, openai.APIStatusError | anthropic.APIStatusError):
        if exc.status_code >= 400:
            return status_error(exc.status_code, detail)
        # An error event inside a 200 stream (Anthropic ``event: error``).
        return _in_stream_error(_error_type(exc.body), detail)
    if isinstance(exc, openai.APIError | anthropic.APIError):
        # OpenAI reports in-stream errors as ``data: {"error": {...}}``.
        return _in_stream_error(_error_type(exc.body), detail)
    if isinstance(exc, openai.OpenAIError | anthropic.AnthropicError):
        return LLMConfigError(detail)
    if isinstance(exc, _HTTP):  # e.g. too many redirects
        return LLMConnectionError(detail)
    return None

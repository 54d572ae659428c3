"""Typed errors of the LLM client layer, and secret scrubbing.

Every error has ``user_message`` (safe to show to a user: no key, no URL, no provider internals
beyond the HTTP status) and ``retryable``. ``str(error)`` is a scrubbed technical detail meant
for logs. The client raises them with no chained SDK exception (SDK exceptions carry the request,
whose headers hold the API key).

Retry policy: connection errors, timeouts, 429, 5xx and malformed responses are retryable
(a malformed body or a stream that breaks off is a provider-side fault, typically transient:
a gateway or proxy error page, a truncated body). Other 4xx and configuration errors are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[REDACTED]"
_MIN_SECRET_LEN = 4
_PATTERNS = [
    # Authorization headers and bearer tokens.
    (re.compile(r"(?i)\b(bearer\s+)[^\s'\",}]+"), r"\1" + REDACTED),
    # x-api-key / api_key: value pairs.
    (
        re.compile(r"(?i)\b(x-api-key|api[_-]?key)(['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"),
        r"\1\2" + REDACTED,
    ),
    # Credentials embedded in URLs: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@:]+:[^\s/@]+@"), r"\1" + REDACTED + "@"),
    # Provider-style keys, including partly masked echoes such as "sk-abc1****wxyz".
    (re.compile(r"\bsk-[A-Za-z0-9_\-*]{6,}"), REDACTED),
]


def scrub(text: object, secrets: Iterable[str | None] = ()) -> str:
    """Return ``str(text)`` with the given secrets and anything that looks like a credential
    replaced by ``[REDACTED]``. Use on every string that goes to a log or an exception."""
    result = str(text)
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        if len(secret) >= _MIN_SECRET_LEN:
            result = result.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        result = pattern.sub(replacement, result)
    return result


class LLMError(Exception):
    retryable = False
    default_user_message = "The model could not produce an answer."

    def __init__(
        self,
        detail: str = "",
        *,
        user_message: str | None = None,
        status_code: int | None = None,
    ) -> None:
        self.detail = detail or self.default_user_message
        super().__init__(self.detail)
        self.user_message = user_message or self.default_user_message
        self.status_code = status_code
        self.attempts = 0  # set by the client when it gives up
        self.model_slug: str | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.detail!r}, status_code={self.status_code!r})"

    @property
    def blind_message(self) -> str:
        """What went wrong in the same words for any model: the kind of failure without this
        call's particulars (an HTTP status tells providers apart, and so the sides of a
        blind contest)."""
        return self.default_user_message


class LLMTimeout(LLMError):
    retryable = True
    default_user_message = "The model provider did not respond in time."


class LLMConnectionError(LLMError):
    retryable = True
    default_user_message = "Could not reach the model provider, or the connection broke off."


class LLMRateLimited(LLMError):
    retryable = True
    default_user_message = "The model provider is rate-limiting requests."


class LLMServerError(LLMError):
    retryable = True
    default_user_message = "The model provider had an internal error."


class LLMRequestRejected(LLMError):
    """A 4xx other than 408/429: the request itself is wrong; retrying cannot help."""

    default_user_message = "The model provider rejected the request."


class LLMContextExceeded(LLMRequestRejected):
    """The provider says the conversation does not fit the model's context window."""

    default_user_message = (
        "The conversation is too long for this model: its context window is full. Start a new "
        "battle, or send something shorter.")


# How providers word "too long" in a 400: OpenAI (context_length_exceeded), llama.cpp
# (exceed_context_size_error), Anthropic ("prompt is too long"), vLLM / others.
CONTEXT_EXCEEDED = re.compile(
    r"context_length_exceeded|exceed_context_size|exceeds the available context|"
    r"maximum context length|prompt is too long|context window|too many tokens", re.IGNORECASE)


class LLMAuthError(LLMRequestRejected):
    default_user_message = "The model provider rejected our credentials."


class LLMMalformedResponse(LLMError):
    retryable = True
    default_user_message = "The model provider sent a response that could not be understood."


class LLMOverBudget(LLMError):
    """The model has spent its daily budget (:mod:`arena.llm.ledger`): nothing was sent."""

    default_user_message = ("This model has spent its budget for today; it answers again "
                            "tomorrow (UTC).")


class LLMConfigError(LLMError):
    default_user_message = "This model is not configured correctly."


def status_error(status: int, detail: str) -> LLMError:
    """The typed error for an HTTP error status from a provider."""
    if status == 429:
        return LLMRateLimited(detail, status_code=status,
                              user_message="The model provider is rate-limiting requests "
                                           "(HTTP 429).")
    if status == 408:
        return LLMTimeout(
            detail, status_code=status, user_message="The model provider timed out (HTTP 408)."
        )
    if status in (401, 403):
        return LLMAuthError(
            detail,
            status_code=status,
            user_message=f"The model provider rejected our credentials (HTTP {status}).",
        )
    if status in (400, 413) and CONTEXT_EXCEEDED.search(detail or ""):
        return LLMContextExceeded(detail, status_code=status)
    if 400 <= status < 500:
        return LLMRequestRejected(
            detail,
            status_code=status,
            user_message=f"The model provider rejected the request (HTTP {status}).",
        )
    if status >= 500:
        return LLMServerError(
            detail,
            status_code=status,
            user_message=f"The model provider had an internal error (HTTP {status}).",
        )
    return LLMServerError(detail, status_code=status)


__all__ = [
    "REDACTED",
    "LLMAuthError",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMContextExceeded",
    "LLMError",
    "LLMMalformedResponse",
    "LLMRateLimited",
    "LLMRequestRejected",
    "LLMServerError",
    "LLMTimeout",
    "scrub",
    "status_error",
]

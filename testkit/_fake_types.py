"""Value types of the fake provider servers: scripted behaviours and the request log."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_TOKEN_RE = re.compile(r"\S+\s*|\s+")


def split_tokens(text: str) -> list[str]:
    """Split text into word tokens (trailing whitespace kept) so that ``"".join(...) == text``."""
    return _TOKEN_RE.findall(text)


def content_text(content: Any) -> str:
    """Text of a message ``content`` that is a string or a list of ``{"type": "text"}`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


@dataclass(frozen=True)
class Behaviour:
    """What the server does for one request. Build with the class methods."""

    kind: str
    status_code: int = 200
    seconds: float | None = None
    text: str | None = None
    after_tokens: int = 0
    body: bytes | None = None
    message: str | None = None
    echo_key: bool = False
    error_type: str | None = None
    token_delay: float | None = None
    first_token_delay: float | None = None
    total_time: float | None = None
    usage: bool | None = None
    then: Behaviour | None = None

    @classmethod
    def ok(
        cls,
        text: str | None = None,
        *,
        token_delay: float | None = None,
        first_token_delay: float | None = None,
        total_time: float | None = None,
        usage: bool | None = None,
    ) -> Behaviour:
        """A normal answer. ``text`` overrides the reply; ``usage=False`` omits usage;
        ``total_time`` spreads the answer evenly over that many seconds."""
        return cls(
            "ok",
            text=text,
            token_delay=token_delay,
            first_token_delay=first_token_delay,
            total_time=total_time,
            usage=usage,
        )

    @classmethod
    def status(cls, code: int, message: str | None = None, *, echo_key: bool = False) -> Behaviour:
        """An HTTP error in the provider's error format; ``echo_key`` puts the received API
        key in the error message (the worst case a client must not leak)."""
        return cls("status", status_code=code, message=message, echo_key=echo_key)

    @classmethod
    def hang(cls, seconds: float | None = None) -> Behaviour:
        """Send nothing for ``seconds`` (None: until the server stops), then drop the connection."""
        return cls("hang", seconds=seconds)

    @classmethod
    def malformed(cls, body: bytes | None = None) -> Behaviour:
        """HTTP 200 with a body (or SSE event) that is not valid JSON."""
        return cls("malformed", body=body)

    @classmethod
    def cut_stream(cls, after_tokens: int = 3) -> Behaviour:
        """Send ``after_tokens`` tokens, then drop the connection mid-body."""
        return cls("cut_stream", after_tokens=after_tokens)

    @classmethod
    def stream_error(cls, after_tokens: int = 1, error_type: str = "overloaded_error") -> Behaviour:
        """Send some tokens, then an in-stream error event (plain requests get HTTP 500)."""
        return cls("stream_error", after_tokens=after_tokens, error_type=error_type)

    @classmethod
    def delay(cls, seconds: float, then: Behaviour | None = None) -> Behaviour:
        """Wait ``seconds`` before doing ``then`` (default: an ok answer)."""
        return cls("delay", seconds=seconds, then=then)


@dataclass(frozen=True)
class RecordedRequest:
    time: float  # time.monotonic() at arrival
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or None
    client_port: int = 0  # the client's end of the TCP connection: one port, one connection

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or []) if isinstance(self.body, dict) else []

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream")) if isinstance(self.body, dict) else False


@dataclass
class Answer:
    tokens: list[str]
    prompt_tokens: int
    truncated: bool  # stopped at max_tokens
    usage: bool
    request_id: str

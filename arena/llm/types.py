"""Value types of the LLM client layer."""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, TypedDict


class ChatMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: str


DeltaCallback = Callable[[str], Awaitable[None] | None]
RestartCallback = Callable[[], Awaitable[None] | None]


@dataclass(frozen=True)
class ModelEndpoint:
    """Everything needed to call one model. Built from the AIModel row; holds no secret."""

    slug: str
    provider_kind: str  # "openai" | "anthropic"
    api_model: str
    base_url: str
    api_key_env: str | None  # NAME of the env var; the key is read from os.environ per call
    max_tokens: int
    system_prompt: str
    input_price_per_million: float = 0.0
    output_price_per_million: float = 0.0
    local_key: str = ""  # an embedded model on this machine: calls are paced (arena.llm.pace)
    provider: str = ""  # its provider's name, for the operators' metrics (arena.metrics)
    daily_spend_usd: float = 0.0  # what it may spend a day over every mode (0: no cap)
    # Another endpoint serving the same model, asked when this one fails or is over budget.
    fallback: ModelEndpoint | None = None


OWN, FALLBACK = "own", "fallback"  # which endpoint of a model served a call


@dataclass(frozen=True)
class JsonOutput:
    """Ask for one JSON object that satisfies ``schema`` (a JSON Schema), called ``name``."""

    name: str
    schema: dict


@dataclass(frozen=True)
class Completion:
    text: str
    latency_ms: int  # wall time of the successful attempt
    ttft_ms: int | None  # time to first text delta (streaming only)
    input_tokens: int
    output_tokens: int
    cost_usd: float  # tokens * price / 1e6
    attempts: int
    usage_estimated: bool = False  # True when the provider sent no usage (see estimate_tokens)
    cut_at_limit: bool = False  # the provider stopped at max_tokens (finish_reason "length")
    served_by: str = OWN  # FALLBACK when the model's fallback endpoint answered


def estimate_tokens(text: str) -> int:
    """Rough token count used when a provider reports no usage: one token per 4 characters
    (rounded up), the usual rule of thumb for English text with BPE tokenizers."""
    return math.ceil(len(text) / 4) if text else 0


class CallbackFailed(Exception):
    """Wraps an exception raised by a caller's callback so it is re-raised untouched."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(repr(original))
        self.original = original


async def call_maybe_async(callback: Callable[..., object], *args: object) -> None:
    result = callback(*args)
    if inspect.isawaitable(result):
        await result


@dataclass
class AttemptState:
    """What one attempt has produced so far; filled in by the provider modules."""

    on_delta: DeltaCallback | None = None
    started: float = field(default_factory=time.monotonic)
    parts: list[str] = field(default_factory=list)
    first_delta_at: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    finished: bool = False
    cut_at_limit: bool = False
    timings: dict | None = None  # llama.cpp's speeds of this response, when it sends them

    @property
    def text(self) -> str:
        return "".join(self.parts)

    async def add_text(self, text: str) -> None:
        if not text:
            return
        if self.first_delta_at is None:
            self.first_delta_at = time.monotonic()
        self.parts.append(text)
        if self.on_delta is not None:
            try:
                await call_maybe_async(self.on_delta, text)
            except Exception as exc:
                raise CallbackFailed(exc) from exc

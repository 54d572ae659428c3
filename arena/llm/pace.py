"""What a call to an embedded model may take and write, from what that model has shown it can
do on this machine.

A llama.cpp server on the CPU reads a prompt at tens of tokens a second and sends nothing
until it has read all of it: a 5,000-character prompt kept Qwen 0.5B silent for longer
than the fixed 30 s read timeout, and the call failed three times over. So for a local
model (``ModelEndpoint.local_key``):

* the time allowed before the first byte follows the prompt: :data:`SLACK` times what
  reading it takes at the model's measured speed, never less than the configured read
  timeout (a timeout is there to notice a dead server, not to hurry a slow one);
* an answer is capped at what the model writes in ``ARENA_LOCAL_ANSWER_SECONDS`` at its
  measured speed (never above the model's own ``max_tokens``, never below
  :data:`MIN_ANSWER_TOKENS`), and a cut answer says so (``Completion.cut_at_limit``).

Speeds start from the model's spec (measured on a busy 2-core machine) and follow what the
server reports in each response's ``timings`` (an exponential moving average, per process).
A remote provider's speed is not ours to measure: its calls are left as they are.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace

from django.conf import settings

from arena.llm.context import estimate_input_tokens
from arena.llm.types import ChatMessage, ModelEndpoint
from arena.local_models.specs import LOCAL_MODELS

SLACK = 4.0  # the model's slots share one thread: four calls at once read at a quarter
MIN_ANSWER_TOKENS = 128
SMOOTHING = 0.3  # weight of the newest measurement
MIN_PROMPT_SAMPLE, MIN_ANSWER_SAMPLE = 64, 16  # fewer tokens than this measure nothing


@dataclass(frozen=True)
class Speed:
    prompt: float  # tokens read a second
    answer: float  # tokens written a second


_speeds: dict[str, Speed] = {}
_lock = threading.Lock()


def speed_of(local_key: str) -> Speed:
    with _lock:
        known = _speeds.get(local_key)
    if known is not None:
        return known
    spec = LOCAL_MODELS.get(local_key)
    if spec is None:
        return Speed(prompt=20.0, answer=5.0)
    return Speed(prompt=spec.prompt_tokens_per_second, answer=spec.answer_tokens_per_second)


def observe(endpoint: ModelEndpoint, timings: dict | None) -> None:
    """Fold a response's llama.cpp ``timings`` into the model's speed."""
    if not endpoint.local_key or not isinstance(timings, dict):
        return
    now = speed_of(endpoint.local_key)
    prompt, answer = now.prompt, now.answer
    if _number(timings.get("prompt_n")) >= MIN_PROMPT_SAMPLE:
        prompt = _blend(prompt, _number(timings.get("prompt_per_second")))
    if _number(timings.get("predicted_n")) >= MIN_ANSWER_SAMPLE:
        answer = _blend(answer, _number(timings.get("predicted_per_second")))
    with _lock:
        _speeds[endpoint.local_key] = Speed(prompt, answer)


def _number(value) -> float:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else 0.0


def _blend(old: float, new: float) -> float:
    return old if new <= 0 else (1 - SMOOTHING) * old + SMOOTHING * new


def paced(endpoint: ModelEndpoint) -> ModelEndpoint:
    """The endpoint with its answer capped at what the model writes in the allowed time."""
    if not endpoint.local_key:
        return endpoint
    seconds = settings.ARENA_LOCAL_ANSWER_SECONDS
    cap = max(MIN_ANSWER_TOKENS, int(speed_of(endpoint.local_key).answer * seconds))
    return replace(endpoint, max_tokens=min(endpoint.max_tokens, cap))


def call_timeouts(endpoint: ModelEndpoint, messages: list[ChatMessage],
                  configured: dict[str, float]) -> dict[str, float]:
    """The configured timeouts, with a local model's read timeout long enough to read this
    prompt (see the module's note)."""
    if not endpoint.local_key:
        return configured
    tokens = estimate_input_tokens([endpoint.system_prompt, *(m["content"] for m in messages)])
    reading = SLACK * tokens / speed_of(endpoint.local_key).prompt
    return {**configured, "read": max(configured["read"], math.ceil(reading))}

"""OpenAI-compatible chat completions through the official ``openai`` SDK.

The system prompt goes first as a ``{"role": "system"}`` message. ``max_tokens`` is sent (not
``max_completion_tokens``) because every OpenAI-compatible server accepts it. Streams ask for
usage with ``stream_options={"include_usage": True}``; a stream counts as complete only once a
choice carried a ``finish_reason`` (a stream that just stops is reported as malformed).
"""

from __future__ import annotations

from typing import Any

import httpx
import openai

from arena.llm.errors import LLMMalformedResponse
from arena.llm.transport import http_client
from arena.llm.types import AttemptState, ChatMessage, JsonOutput, ModelEndpoint

_SHAPE_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError)


def make_client(endpoint: ModelEndpoint, api_key: str, timeouts: dict[str, float]) -> Any:
    return openai.AsyncOpenAI(
        base_url=endpoint.base_url or None,
        api_key=api_key,
        max_retries=0,
        http_client=http_client(openai.DefaultAsyncHttpxClient),
        timeout=httpx.Timeout(**timeouts),
    )


def build_messages(endpoint: ModelEndpoint, messages: list[ChatMessage]) -> list[dict[str, str]]:
    result = []
    if endpoint.system_prompt:
        result.append({"role": "system", "content": endpoint.system_prompt})
    result.extend({"role": m["role"], "content": m["content"]} for m in messages)
    return result


def _usage(usage: Any) -> tuple[int | None, int | None]:
    if usage is None:
        return None, None
    if isinstance(usage, dict):
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    else:
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
    return (
        prompt if isinstance(prompt, int) else None,
        completion if isinstance(completion, int) else None,
    )


def _timings(data: Any) -> dict | None:
    """llama.cpp's ``timings`` of a response or a stream's last chunk (read by
    :mod:`arena.llm.pace`); None from any other server."""
    timings = data.get("timings") if isinstance(data, dict) else getattr(data, "timings", None)
    return timings if isinstance(timings, dict) else None


def _parse_completion(response: Any) -> tuple[str, int | None, int | None]:
    try:
        message = response.choices[0].message
        text = message.content or getattr(message, "refusal", None) or ""
        if not isinstance(text, str):
            raise TypeError("content is not a string")
        prompt, completion = _usage(getattr(response, "usage", None))
    except _SHAPE_ERRORS as exc:
        raise LLMMalformedResponse(
            f"unexpected chat completion shape ({type(exc).__name__})"
        ) from None
    return text, prompt, completion


def _parse_chunk(chunk: Any) -> tuple[str, str | None, tuple[int | None, int | None] | None]:
    """Text delta of choice 0, its finish_reason if one arrived, and usage if present.

    ``chunk`` is the decoded JSON of one event (a dict), as the SDK's stream decodes it."""
    try:
        parts: list[str] = []
        finished = None
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content") or delta.get("refusal")
            if content:
                if not isinstance(content, str):
                    raise TypeError("delta content is not a string")
                parts.append(content)
            if choice.get("finish_reason"):
                finished = str(choice["finish_reason"])
        usage = chunk.get("usage")
        return "".join(parts), finished, (_usage(usage) if usage is not None else None)
    except _SHAPE_ERRORS as exc:
        raise LLMMalformedResponse(
            f"unexpected chat completion chunk shape ({type(exc).__name__})"
        ) from None


async def run_attempt(
    client: Any,
    endpoint: ModelEndpoint,
    messages: list[ChatMessage],
    state: AttemptState,
    *,
    stream: bool,
    output: JsonOutput | None = None,
    timeouts: dict[str, float] | None = None,
) -> None:
    """One request; fills ``state``. Raises SDK/transport exceptions or LLMMalformedResponse.

    With ``output``, the JSON Schema goes as ``response_format`` (OpenAI's structured outputs;
    llama.cpp's server turns it into a grammar and enforces it). ``timeouts``: this request's
    own, instead of the client's."""
    params: dict[str, Any] = {
        "model": endpoint.api_model,
        "messages": build_messages(endpoint, messages),
        "max_tokens": endpoint.max_tokens,
    }
    if output is not None:
        params["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": output.name, "schema": output.schema, "strict": True},
        }
    options = {"timeout": httpx.Timeout(**timeouts)} if timeouts else {}
    if not stream:
        response = await client.chat.completions.create(**params, **options)
        text, state.input_tokens, state.output_tokens = _parse_completion(response)
        state.timings = _timings(getattr(response, "model_extra", None) or {})
        state.parts.append(text)
        state.finished = True
        state.cut_at_limit = getattr(response.choices[0], "finish_reason", None) == "length"
        return

    # The SDK's own request and event stream, without building a typed object per chunk (a
    # model sends hundreds; each cost more than everything else the worker does with it).
    chunks = await client.post(
        "/chat/completions", cast_to=object, stream=True, stream_cls=openai.AsyncStream[object],
        body={**params, "stream": True, "stream_options": {"include_usage": True}},
        options=options,
    )
    async with chunks:
        async for chunk in chunks:
            text, finished, usage = _parse_chunk(chunk)
            if usage is not None:
                state.input_tokens, state.output_tokens = usage
                state.timings = _timings(chunk) or state.timings
            state.finished = state.finished or bool(finished)
            state.cut_at_limit = state.cut_at_limit or finished == "length"
            await state.add_text(text)
    if not state.finished:
        raise LLMMalformedResponse("stream ended without a finish_reason")

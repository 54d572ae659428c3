"""Anthropic Messages API through the official ``anthropic`` SDK.

The system prompt goes to the top-level ``system`` parameter (the Messages API has no system
role); ``max_tokens`` is required. Streams are read as raw events: ``message_start`` (input
tokens), ``content_block_delta`` with ``text_delta`` (text), ``message_delta`` (final output
tokens), ``message_stop`` (complete). A stream without ``message_stop`` is reported as malformed;
an in-stream ``error`` event is raised by the SDK and classified by its ``error.type``.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic

from arena.llm.errors import LLMMalformedResponse
from arena.llm.transport import http_client
from arena.llm.types import AttemptState, ChatMessage, JsonOutput, ModelEndpoint

_SHAPE_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError)


def make_client(endpoint: ModelEndpoint, api_key: str, timeouts: dict[str, float]) -> Any:
    return anthropic.AsyncAnthropic(
        base_url=endpoint.base_url or None,
        api_key=api_key,
        max_retries=0,
        http_client=http_client(anthropic.DefaultAsyncHttpxClient),
        timeout=anthropic.Timeout(**timeouts),
        # Recent SDKs send the key as ``Authorization: Bearer``; also send the documented
        # ``x-api-key`` header, which every Anthropic-compatible gateway understands.
        default_headers={"x-api-key": api_key},
    )


def build_params(endpoint: ModelEndpoint, messages: list[ChatMessage]) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": endpoint.api_model,
        "max_tokens": endpoint.max_tokens,
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
    }
    if endpoint.system_prompt:
        params["system"] = endpoint.system_prompt
    return params


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def _parse_message(response: Any) -> tuple[str, int | None, int | None]:
    """The reply's text; for a forced tool call, the tool input as JSON text."""
    try:
        tool_inputs = [block.input for block in response.content
                       if getattr(block, "type", None) == "tool_use"]
        text = json.dumps(tool_inputs[0]) if tool_inputs else "".join(
            block.text for block in response.content if getattr(block, "type", None) == "text"
        )
        if not isinstance(text, str):
            raise TypeError("text is not a string")
        usage = getattr(response, "usage", None)
        input_tokens = _int_or_none(getattr(usage, "input_tokens", None))
        output_tokens = _int_or_none(getattr(usage, "output_tokens", None))
    except _SHAPE_ERRORS as exc:
        raise LLMMalformedResponse(f"unexpected message shape ({type(exc).__name__})") from None
    return text, input_tokens, output_tokens


def _apply_event(event: Any, state: AttemptState) -> str:
    """Update token counts / completion from one stream event; return its text delta."""
    try:
        kind = event.type
        if kind == "content_block_delta":
            delta = event.delta
            if getattr(delta, "type", None) == "text_delta":
                if not isinstance(delta.text, str):
                    raise TypeError("text delta is not a string")
                return delta.text
        elif kind == "message_start":
            usage = getattr(event.message, "usage", None)
            state.input_tokens = _int_or_none(getattr(usage, "input_tokens", None))
        elif kind == "message_delta":
            if getattr(getattr(event, "delta", None), "stop_reason", None) == "max_tokens":
                state.cut_at_limit = True
            usage = getattr(event, "usage", None)
            output_tokens = _int_or_none(getattr(usage, "output_tokens", None))
            if output_tokens is not None:
                state.output_tokens = output_tokens
            input_tokens = _int_or_none(getattr(usage, "input_tokens", None))
            if state.input_tokens is None and input_tokens is not None:
                state.input_tokens = input_tokens
        elif kind == "message_stop":
            state.finished = True
        return ""
    except _SHAPE_ERRORS as exc:
        raise LLMMalformedResponse(
            f"unexpected stream event shape ({type(exc).__name__})"
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

    With ``output``, the model is made to call one tool whose input schema is the JSON Schema
    (Anthropic's documented way to get structured JSON). ``timeouts``: this request's own,
    instead of the client's."""
    params = build_params(endpoint, messages)
    if timeouts:
        params["timeout"] = anthropic.Timeout(**timeouts)
    if output is not None:
        params["tools"] = [{"name": output.name, "input_schema": output.schema,
                            "description": "Record the answer in this exact structure."}]
        params["tool_choice"] = {"type": "tool", "name": output.name}
    if not stream:
        response = await client.messages.create(**params)
        text, state.input_tokens, state.output_tokens = _parse_message(response)
        state.parts.append(text)
        state.finished = True
        state.cut_at_limit = getattr(response, "stop_reason", None) == "max_tokens"
        return

    events = await client.messages.create(**params, stream=True)
    async with events:
        async for event in events:
            await state.add_text(_apply_event(event, state))
    if not state.finished:
        raise LLMMalformedResponse("stream ended without message_stop")

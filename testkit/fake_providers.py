"""Fake OpenAI and Anthropic servers: real local HTTP, scripted failures, a request log.

Usage::

    server = FakeOpenAIServer().start()          # or the ``fake_openai`` pytest fixture
    server.script(Behaviour.status(500), Behaviour.ok())
    endpoint = server.endpoint("gpt-test")       # ModelEndpoint; key env var set by the fixture
    ...
    [r.body["messages"] for r in server.chat_requests]
    server.stop()

Wire formats follow the public APIs:

* OpenAI chat completions: ``chat.completion`` objects; streams of ``chat.completion.chunk``
  objects sent as ``data: {...}`` lines, first a role delta, then content deltas, then a chunk
  with ``finish_reason``, then (if ``stream_options.include_usage``) a chunk with
  ``choices: []`` and ``usage``, then ``data: [DONE]``. Errors: ``{"error": {...}}``.
* Anthropic messages: ``{"type": "message", "content": [{"type": "text", ...}], "usage":
  {"input_tokens", "output_tokens"}}``; streams of named SSE events; errors
  ``{"type": "error", "error": {"type", "message"}}``, also as an in-stream ``error`` event.
"""

from __future__ import annotations

import json
import time
from typing import Any

from testkit._fake_http import FakeProviderServer
from testkit._fake_types import (
    Answer,
    Behaviour,
    RecordedRequest,
    content_text,
    split_tokens,
)

__all__ = [
    "Answer",
    "Behaviour",
    "FakeAnthropicServer",
    "FakeOpenAIServer",
    "FakeProviderServer",
    "RecordedRequest",
    "content_text",
    "split_tokens",
]


def _sse(data: Any, event: str | None = None) -> bytes:
    payload = data if isinstance(data, bytes) else json.dumps(data).encode()
    prefix = f"event: {event}\n".encode() if event else b""
    return prefix + b"data: " + payload + b"\n\n"


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for start in (i for i, char in enumerate(text) if char == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _body_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "Request body must be a JSON object."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: must be a non-empty list"
    if not all(isinstance(m, dict) and "role" in m and "content" in m for m in messages):
        return "messages: each message needs role and content"
    return None


class FakeOpenAIServer(FakeProviderServer):
    kind = "openai"
    chat_path = "/v1/chat/completions"
    url_suffix = "/v1"
    api_key_env = "ARENA_FAKE_OPENAI_API_KEY"
    # llama.cpp's ``timings`` (its speeds), sent beside the usage when set, as its server does.
    timings: dict[str, float] | None = None

    _ERROR_TYPES = {
        400: "invalid_request_error",
        401: "invalid_request_error",
        403: "invalid_request_error",
        404: "invalid_request_error",
        429: "rate_limit_exceeded",
    }

    def received_key(self, rec: RecordedRequest) -> str:
        auth = rec.headers.get("authorization", "")
        return auth[7:].strip() if auth.lower().startswith("bearer ") else ""

    def check_request(self, rec: RecordedRequest) -> tuple[int, str] | None:
        key = self.received_key(rec)
        if not key:
            return 401, "You didn't provide an API key."
        if self.api_key is not None and key != self.api_key:
            return 401, f"Incorrect API key provided: {key}."
        problem = _body_problem(rec.body)
        return (400, problem) if problem else None

    def max_tokens(self, body: dict[str, Any]) -> int | None:
        value = body.get("max_completion_tokens", body.get("max_tokens"))
        return value if isinstance(value, int) else None

    def error_payload(self, status: int, message: str) -> dict[str, Any]:
        error_type = self._ERROR_TYPES.get(status, "server_error" if status >= 500 else "error")
        code = "invalid_api_key" if status == 401 else None
        return {"error": {"message": message, "type": error_type, "param": None, "code": code}}

    def models_payload(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models
            ],
        }

    def _usage(self, a: Answer) -> dict[str, int]:
        return {
            "prompt_tokens": a.prompt_tokens,
            "completion_tokens": len(a.tokens),
            "total_tokens": a.prompt_tokens + len(a.tokens),
        }

    def plain_payload(self, rec: RecordedRequest, a: Answer) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "id": f"chatcmpl-fake{a.request_id}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": rec.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "".join(a.tokens), "refusal": None},
                    "logprobs": None,
                    "finish_reason": "length" if a.truncated else "stop",
                }
            ],
        }
        if a.usage:
            payload["usage"] = self._usage(a)
        if self.timings is not None:
            payload["timings"] = self.timings
        return payload

    def _include_usage(self, rec: RecordedRequest) -> bool:
        options = rec.body.get("stream_options") if isinstance(rec.body, dict) else None
        return isinstance(options, dict) and bool(options.get("include_usage"))

    def _chunk(self, rec: RecordedRequest, a: Answer, choices: list[Any]) -> bytes:
        chunk: dict[str, Any] = {
            "id": f"chatcmpl-fake{a.request_id}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": rec.model,
            "system_fingerprint": None,
            "choices": choices,
        }
        if self._include_usage(rec):
            chunk["usage"] = None
        return _sse(chunk)

    def sse_preamble(self, rec: RecordedRequest, a: Answer) -> list[bytes]:
        delta = {"role": "assistant", "content": ""}
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
        return [self._chunk(rec, a, [choice])]

    def sse_token(self, rec: RecordedRequest, a: Answer, token: str) -> bytes:
        choice = {"index": 0, "delta": {"content": token}, "logprobs": None, "finish_reason": None}
        return self._chunk(rec, a, [choice])

    def sse_finish(self, rec: RecordedRequest, a: Answer) -> list[bytes]:
        reason = "length" if a.truncated else "stop"
        events = [
            self._chunk(
                rec, a, [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reason}]
            )
        ]
        if self._include_usage(rec) and a.usage:
            events.append(
                _sse(
                    {
                        "id": f"chatcmpl-fake{a.request_id}",
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": rec.model,
                        "choices": [],
                        "usage": self._usage(a),
                        **({"timings": self.timings} if self.timings is not None else {}),
                    }
                )
            )
        events.append(b"data: [DONE]\n\n")
        return events

    def sse_error(self, error_type: str) -> bytes:
        return _sse(
            {
                "error": {
                    "message": "The server had an error while processing your request.",
                    "type": "server_error",
                    "code": error_type,
                }
            }
        )

    def sse_junk(self, body: bytes | None) -> bytes:
        return b"data: " + (body or b'{"choices": [{"delta": not json') + b"\n\n"


class FakeAnthropicServer(FakeProviderServer):
    kind = "anthropic"
    chat_path = "/v1/messages"
    url_suffix = ""
    api_key_env = "ARENA_FAKE_ANTHROPIC_API_KEY"

    _ERROR_TYPES = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }

    def received_key(self, rec: RecordedRequest) -> str:
        return rec.headers.get("x-api-key", "").strip()

    def check_request(self, rec: RecordedRequest) -> tuple[int, str] | None:
        key = self.received_key(rec)
        if not key:
            return 401, "x-api-key header is required"
        if not rec.headers.get("anthropic-version"):
            return 400, "anthropic-version: header is required"
        if self.api_key is not None and key != self.api_key:
            return 401, f"invalid x-api-key: {key}"
        problem = _body_problem(rec.body)
        if problem:
            return 400, problem
        if not isinstance(rec.body.get("max_tokens"), int):
            return 400, "max_tokens: Field required"
        for message in rec.body["messages"]:
            if message["role"] not in ("user", "assistant"):
                return 400, (
                    f'messages: Unexpected role "{message["role"]}". Use the top-level '
                    "`system` parameter for system prompts."
                )
        return None

    def max_tokens(self, body: dict[str, Any]) -> int | None:
        value = body.get("max_tokens")
        return value if isinstance(value, int) else None

    def error_payload(self, status: int, message: str) -> dict[str, Any]:
        error_type = self._ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": error_type, "message": message}}

    def models_payload(self) -> dict[str, Any]:
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
            for m in self.models
        ]
        return {
            "data": data,
            "has_more": False,
            "first_id": self.models[0],
            "last_id": self.models[-1],
        }

    def plain_payload(self, rec: RecordedRequest, a: Answer) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "id": f"msg_fake{a.request_id}",
            "type": "message",
            "role": "assistant",
            "model": rec.model,
            "content": [{"type": "text", "text": "".join(a.tokens)}],
            "stop_reason": "max_tokens" if a.truncated else "end_turn",
            "stop_sequence": None,
        }
        tool = self._forced_tool(rec)
        tool_input = _first_object("".join(a.tokens)) if tool is not None else None
        if tool_input is not None:
            # A forced tool call: the first JSON object in the scripted reply is the tool's
            # input. A script with no object at all gets its text back as a text block, like
            # a gateway that ignores tools.
            payload["content"] = [{"type": "tool_use", "id": f"toolu_fake{a.request_id}",
                                   "name": tool, "input": tool_input}]
            payload["stop_reason"] = "tool_use"
        if a.usage:
            payload["usage"] = {"input_tokens": a.prompt_tokens, "output_tokens": len(a.tokens)}
        return payload

    @staticmethod
    def _forced_tool(rec: RecordedRequest) -> str | None:
        choice = rec.body.get("tool_choice") if isinstance(rec.body, dict) else None
        if isinstance(choice, dict) and choice.get("type") == "tool":
            return choice.get("name")
        return None

    def sse_preamble(self, rec: RecordedRequest, a: Answer) -> list[bytes]:
        message: dict[str, Any] = {
            "id": f"msg_fake{a.request_id}",
            "type": "message",
            "role": "assistant",
            "model": rec.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
        }
        if a.usage:
            message["usage"] = {"input_tokens": a.prompt_tokens, "output_tokens": 1}
        return [
            _sse({"type": "message_start", "message": message}, "message_start"),
            _sse(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            ),
            _sse({"type": "ping"}, "ping"),
        ]

    def sse_token(self, rec: RecordedRequest, a: Answer, token: str) -> bytes:
        return _sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": token},
            },
            "content_block_delta",
        )

    def sse_finish(self, rec: RecordedRequest, a: Answer) -> list[bytes]:
        delta: dict[str, Any] = {
            "type": "message_delta",
            "delta": {
                "stop_reason": "max_tokens" if a.truncated else "end_turn",
                "stop_sequence": None,
            },
        }
        if a.usage:
            delta["usage"] = {"output_tokens": len(a.tokens)}
        return [
            _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            _sse(delta, "message_delta"),
            _sse({"type": "message_stop"}, "message_stop"),
        ]

    def sse_error(self, error_type: str) -> bytes:
        message = "Overloaded" if error_type == "overloaded_error" else "Internal server error"
        return _sse({"type": "error", "error": {"type": error_type, "message": message}}, "error")

    def sse_junk(self, body: bytes | None) -> bytes:
        return _sse(body or b'{"type": "content_block_delta", not json', "content_block_delta")

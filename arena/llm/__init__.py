"""LLM client layer: one async interface to OpenAI-compatible and Anthropic chat models.

Example::

    completion = await stream_chat(
        endpoint,
        [{"role": "user", "content": "Hi"}],
        on_delta=send_to_browser,
        on_restart=clear_partial_text,
    )
"""

from arena.llm.client import complete_chat, stream_chat
from arena.llm.errors import (
    LLMAuthError,
    LLMConfigError,
    LLMConnectionError,
    LLMContextExceeded,
    LLMError,
    LLMMalformedResponse,
    LLMRateLimited,
    LLMRequestRejected,
    LLMServerError,
    LLMTimeout,
    scrub,
)
from arena.llm.structured import (
    LLMSchemaViolation,
    StructuredCompletion,
    complete_json,
    extract_json_object,
    schema_problem,
)
from arena.llm.types import ChatMessage, Completion, JsonOutput, ModelEndpoint, estimate_tokens

__all__ = [
    "ChatMessage",
    "Completion",
    "JsonOutput",
    "LLMAuthError",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMContextExceeded",
    "LLMError",
    "LLMMalformedResponse",
    "LLMRateLimited",
    "LLMRequestRejected",
    "LLMSchemaViolation",
    "LLMServerError",
    "LLMTimeout",
    "ModelEndpoint",
    "StructuredCompletion",
    "complete_chat",
    "complete_json",
    "estimate_tokens",
    "extract_json_object",
    "schema_problem",
    "scrub",
    "stream_chat",
]

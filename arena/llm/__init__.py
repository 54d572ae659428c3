"""LLM client layer: one async interface to OpenAI-compatible and Anthropic chat models.

Example::

    completion = await stream_chat(
        endpoint,
        [{"role": "user", "content": "Hi"}],
        on_delta=send_to_browser,
        on_restart=clear_partial_text,
    )
"""

from importlib import import_module

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
from arena.llm.types import ChatMessage, Completion, JsonOutput, ModelEndpoint, estimate_tokens

# The calls load the provider SDKs (openai, anthropic: about 2 s of imports), so they load
# on first use: a process that only reads the model registry (a page, ``manage.py rate``)
# never pays for them.
_LAZY = {
    "complete_chat": "arena.llm.client",
    "stream_chat": "arena.llm.client",
    "LLMSchemaViolation": "arena.llm.structured",
    "StructuredCompletion": "arena.llm.structured",
    "complete_json": "arena.llm.structured",
    "extract_json_object": "arena.llm.json_text",
    "schema_problem": "arena.llm.structured",
}


def load_client() -> None:
    """Load the client and its provider SDKs now rather than on first use: a process about to
    call models (a worker before it takes tasks, a voice call while its greeting plays) pays
    the few seconds where nobody waits on them."""
    import_module("arena.llm.client")


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'arena.llm' has no attribute {name!r}")


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
    "load_client",
    "schema_problem",
    "scrub",
    "stream_chat",
]

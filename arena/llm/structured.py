"""Structured model output: one JSON object that satisfies a JSON Schema.

Example::

    result = await complete_json(endpoint, messages, RANKING_SCHEMA, name="ranking")
    result.data          # the object, already checked against the schema
    result.method        # "json_schema" | "tool_use" | "extracted"

OpenAI-compatible servers get the schema as ``response_format`` (llama.cpp's server turns it
into a grammar, so even a 135M model answers in shape); Anthropic gets it as the input schema of
one forced tool. A provider that refuses structured output (a 400 naming ``response_format``
or ``tools``) is asked once more plainly, and the object is extracted from its text: code
fences, prose around it, nested objects, trailing commas and typographic quotes are handled.
An object that does not satisfy the schema raises :class:`LLMSchemaViolation`, whose message
says what is wrong, so a caller can ask again with the error stated.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import jsonschema

from arena.llm.client import complete_chat
from arena.llm.errors import LLMError, LLMRequestRejected
from arena.llm.types import ChatMessage, Completion, JsonOutput, ModelEndpoint

_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")
_REFUSED_FEATURES = ("response_format", "json_schema", "tool", "schema", "grammar")

NO_JSON = "the reply contains no JSON object"
INCOMPLETE_JSON = "the reply has no complete JSON object (it may have been cut off)"


class LLMSchemaViolation(LLMError):
    """The reply is not JSON of the asked shape; ``user_message`` says what is wrong."""

    default_user_message = "The model's reply was not in the asked format."


@dataclass(frozen=True)
class StructuredCompletion:
    data: dict
    completion: Completion
    method: str  # "json_schema" (OpenAI-compatible), "tool_use" (Anthropic), "extracted"


async def complete_json(endpoint: ModelEndpoint, messages: list[ChatMessage], schema: dict,
                        *, name: str = "result") -> StructuredCompletion:
    """Ask for one JSON object satisfying ``schema``; see the module docstring."""
    output = JsonOutput(name=name, schema=schema)
    method = "tool_use" if endpoint.provider_kind == "anthropic" else "json_schema"
    try:
        completion = await complete_chat(endpoint, messages, output=output)
    except LLMRequestRejected as error:
        if not _refused_structure(error):
            raise
        completion, method = await complete_chat(endpoint, messages), "extracted"
    try:
        data = extract_json_object(completion.text, want_key=_first_required(schema))
    except ValueError as exc:
        raise _violation(str(exc), completion, None) from None
    problem = schema_problem(data, schema)
    if problem:
        raise _violation(problem, completion, data)
    return StructuredCompletion(data=data, completion=completion, method=method)


def schema_problem(data: object, schema: dict) -> str | None:
    """Why ``data`` does not satisfy ``schema`` (one line), or None."""
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def _violation(problem: str, completion: Completion, data: dict | None) -> LLMSchemaViolation:
    error = LLMSchemaViolation(problem, user_message=problem)
    error.reply = completion.text  # what the model said, for a retry that quotes it
    error.data = data  # the object found, if any (a caller may judge it more kindly)
    error.completion = completion
    return error


def _refused_structure(error: LLMRequestRejected) -> bool:
    detail = (error.detail or "").lower()
    return error.status_code in (400, 422) and any(w in detail for w in _REFUSED_FEATURES)


def _first_required(schema: dict) -> str | None:
    required = schema.get("required") or []
    return required[0] if required else None


# --- finding a JSON object in free text ------------------------------------------------------


def _candidates(text: str) -> list[str]:
    """Where JSON may be: inside code fences first, then the whole reply."""
    return [*(m.group(1) for m in _FENCE.finditer(text)), text]


def _objects_in(text: str) -> list[object]:
    """Every JSON value that starts at a ``{`` and parses, outermost first, left to right.

    ``raw_decode`` at each brace finds a complete object however deeply it nests, and ignores
    prose before and after it (a regex over braces cannot balance nested ones).
    """
    decoder = json.JSONDecoder()
    found: list[object] = []
    end_of_last = -1
    for match in re.finditer(r"\{", text):
        start = match.start()
        if start < end_of_last:
            continue  # inside an object already found
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        found.append(value)
        end_of_last = end
    return found


def _repaired(text: str) -> str:
    """Small, safe repairs of near-JSON: typographic quotes and trailing commas."""
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    return _TRAILING_COMMA.sub(r"\1", text)


def _find_key(value: object, key: str, depth: int = 0) -> dict | None:
    """A dict holding ``key`` nested inside ``value`` (e.g. ``{"ranking": {"results": ...}}``)."""
    if depth > 5:
        return None
    children = value.values() if isinstance(value, dict) else value if isinstance(
        value, list) else []
    for child in children:
        if isinstance(child, dict) and key in child:
            return child
        found = _find_key(child, key, depth + 1)
        if found is not None:
            return found
    return None


def extract_json_object(text: str, *, want_key: str | None = None) -> dict:
    """The first JSON object in ``text`` that has ``want_key`` (also when nested), else the
    first object. Raises ``ValueError`` (:data:`NO_JSON` / :data:`INCOMPLETE_JSON`)."""
    first: dict | None = None
    for attempt in (text or "", _repaired(text or "")):
        for candidate in _candidates(attempt):
            for value in _objects_in(candidate):
                if not isinstance(value, dict):
                    continue
                if want_key is None or want_key in value:
                    return value
                first = first if first is not None else value
                nested = _find_key(value, want_key)
                if nested is not None:
                    return nested
    if first is not None:
        return first
    raise ValueError(INCOMPLETE_JSON if "{" in (text or "") else NO_JSON)

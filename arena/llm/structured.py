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

from dataclasses import dataclass

import jsonschema

from arena.llm.client import complete_chat
from arena.llm.errors import LLMError, LLMRequestRejected
from arena.llm.json_text import extract_json_object
from arena.llm.types import ChatMessage, Completion, JsonOutput, ModelEndpoint

_REFUSED_FEATURES = ("response_format", "json_schema", "tool", "schema", "grammar")


class LLMSchemaViolation(LLMError):
    """The reply is not JSON of the asked shape even after one more ask; ``problem`` says
    what is wrong in the schema's terms (for a prompt or a log), ``user_message`` in a
    person's."""

    default_user_message = ("The model's answer could not be read: it was not in the shape "
                            "asked for, twice.")
    problem = ""


@dataclass(frozen=True)
class StructuredCompletion:
    data: dict
    completion: Completion
    method: str  # "json_schema" (OpenAI-compatible), "tool_use" (Anthropic), "extracted"


async def complete_json(endpoint: ModelEndpoint, messages: list[ChatMessage], schema: dict,
                        *, name: str = "result", reask: bool = True) -> StructuredCompletion:
    """Ask for one JSON object satisfying ``schema``; see the module docstring. ``reask``
    False: no second ask (a caller that asks again in its own terms, as the panel's judges
    do with their labels)."""
    output = JsonOutput(name=name, schema=schema)
    method = "tool_use" if endpoint.provider_kind == "anthropic" else "json_schema"
    try:
        completion = await complete_chat(endpoint, messages, output=output)
    except LLMRequestRejected as error:
        if not _refused_structure(error):
            raise
        output, method = None, "extracted"
        completion = await complete_chat(endpoint, messages)
    data, problem = _read(completion, schema)
    if problem and reask:
        # The repair pass: the model is told what was wrong and asked once more.
        again = [*messages, {"role": "assistant", "content": completion.text or "(nothing)"},
                 {"role": "user", "content": REASK.format(problem=problem)}]
        completion = await complete_chat(endpoint, again, output=output)
        data, problem = _read(completion, schema)
    if problem:
        raise _violation(problem, completion, data)
    return StructuredCompletion(data=data, completion=completion, method=method)


REASK = ("That reply could not be used: {problem}. Reply again with only the JSON object, "
         "complete and in the asked shape.")


def _read(completion: Completion, schema: dict) -> tuple[dict | None, str | None]:
    """The object in a reply and what is wrong with it (None: nothing)."""
    try:
        data = extract_json_object(completion.text, want_key=_first_required(schema))
    except ValueError as exc:
        return None, str(exc)
    return data, schema_problem(data, schema)


def schema_problem(data: object, schema: dict) -> str | None:
    """Why ``data`` does not satisfy ``schema`` (one line), or None."""
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def _violation(problem: str, completion: Completion, data: dict | None) -> LLMSchemaViolation:
    error = LLMSchemaViolation(problem)
    error.problem = problem
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

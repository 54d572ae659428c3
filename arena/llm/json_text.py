"""Finding the JSON object in a model's free text: code fences, prose around it, nested
objects, trailing commas and typographic quotes. It loads no provider SDK: the panel's
judging rules read a judge's reply with it and its pages import them, in web processes that
call no model (:mod:`arena.llm.structured`, which asks a model for JSON, loads the client)."""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")

NO_JSON = "the reply contains no JSON object"
INCOMPLETE_JSON = "the reply has no complete JSON object (it may have been cut off)"


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


_CLOSERS = {"{": "}", "[": "]"}


def closed_cut_json(text: str) -> str | None:
    """A reply cut off mid-object (at the length limit) made whole: everything after the last
    complete member is dropped and the open brackets are closed, so the members written in
    full are kept. None when there is no object to close or nothing complete in it."""
    start = text.find("{")
    if start < 0:
        return None
    stack: list[str] = []
    in_string = escaped = False
    cuts: list[tuple[int, tuple[str, ...]]] = []  # where a member ended, and what was open
    for i, char in enumerate(text[start:], start):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in _CLOSERS:
            stack.append(char)
        elif char in "}]":
            if not stack:
                return None
            stack.pop()
            if not stack:
                return None  # a complete object: nothing was cut
            cuts.append((i + 1, tuple(stack)))
        elif char == ",":
            cuts.append((i, tuple(stack)))
    for end, still_open in reversed(cuts):
        candidate = text[start:end] + "".join(_CLOSERS[b] for b in reversed(still_open))
        try:
            json.loads(candidate)
        except ValueError:
            continue
        return candidate
    return None


def extract_json_object(text: str, *, want_key: str | None = None) -> dict:
    """The first JSON object in ``text`` that has ``want_key`` (also when nested), else the
    first object; a reply cut off mid-object keeps its complete members
    (:func:`closed_cut_json`). Raises ``ValueError`` (:data:`NO_JSON` /
    :data:`INCOMPLETE_JSON`)."""
    first: dict | None = None
    closed = closed_cut_json(_repaired(text or ""))
    for attempt in (text or "", _repaired(text or ""), *([closed] if closed else [])):
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

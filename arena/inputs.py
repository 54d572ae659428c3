"""What every mode checks of what a person sends: the text they type (prompts, questions,
motions) and the ids in URLs and payloads."""

from __future__ import annotations

import uuid

from django.conf import settings

from arena.errors import RuleError


def clean_text(value: str | None, *, empty: str, too_long: str, limit: int | None = None) -> str:
    """The text stripped; 400 with ``empty`` if nothing is left, 422 with ``too_long``
    (formatted with ``limit`` and ``length``) past ``limit`` characters (default
    ``ARENA_PROMPT_MAX_CHARS``)."""
    text = (value or "").strip()
    if not text:
        raise RuleError(empty, status=400)
    limit = limit or settings.ARENA_PROMPT_MAX_CHARS
    if len(text) > limit:
        raise RuleError(too_long.format(limit=limit, length=len(text)), status=422)
    return text


def parse_uuid(value) -> uuid.UUID | None:  # noqa: ANN001 - an id from a URL or a payload
    """``value`` as a UUID, or None when it is not one (an unknown id is a 404, not a 500)."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None

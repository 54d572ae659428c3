"""What every mode checks of the text a person types (prompts, questions, motions)."""

from __future__ import annotations

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

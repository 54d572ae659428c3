"""What every mode checks of what a person sends: the text they type (prompts, questions,
motions) and the ids in URLs and payloads."""

from __future__ import annotations

import re
import uuid

from django.conf import settings

from arena.errors import RuleError

UNSTORABLE = ("{field} contains {what}, which cannot be stored: remove it and send the text "
              "again.")
_SURROGATE = re.compile("[\ud800-\udfff]")


def unstorable(text: str) -> str | None:
    """What in ``text`` no database keeps (a NUL byte, or half of a UTF-16 surrogate pair that
    JSON's ``\\ud800`` escapes can carry), or None when there is nothing."""
    if "\x00" in text:
        return "a NUL byte"
    if _SURROGATE.search(text):
        return "a lone UTF-16 surrogate"
    return None


def check_storable(text: str, *, field: str) -> str:
    """``text`` itself, or a 400 naming ``field`` if it holds what cannot be stored."""
    what = unstorable(text)
    if what:
        raise RuleError(UNSTORABLE.format(field=field, what=what), status=400)
    return text


def clean_text(value: str | None, *, empty: str, too_long: str, limit: int | None = None,
               field: str = "The text") -> str:
    """The text stripped; 400 with ``empty`` if nothing is left or naming ``field`` if it
    holds what cannot be stored, 422 with ``too_long`` (formatted with ``limit`` and
    ``length``) past ``limit`` characters (default ``ARENA_PROMPT_MAX_CHARS``)."""
    text = check_storable((value or "").strip(), field=field)
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

"""Provider keys, read from the environment when they are needed: never stored, never logged,
never shown beyond a prefix of at most :data:`MAX_PREFIX_LEN` characters.

A models-file entry names its key's variable (``api_key_env``). Some keys are known under two
names: Google's Gemini key is ``GEMINI_API_KEY`` to Google's own SDKs and ``GOOGLE_API_KEY``
to seed 003 (and to Google's older clients), so either one serves an entry naming the other.
"""

from __future__ import annotations

import os

# Each variable, and the other names its key may be set under, first match wins.
KEY_ALIASES: dict[str, tuple[str, ...]] = {
    "GEMINI_API_KEY": ("GOOGLE_API_KEY",),
    "GOOGLE_API_KEY": ("GEMINI_API_KEY",),
}
DEFAULT_PREFIX_LEN = 4  # seed 003's prefix_len: enough to tell keys apart
MAX_PREFIX_LEN = 8
# A key shows its prefix only when it is at least this many times longer than the prefix, so a
# short value (a placeholder, a mistyped paste) shows nothing of itself.
_PREFIX_SHARE = 3


def key_names(env_var: str) -> tuple[str, ...]:
    """The variables that may hold ``env_var``'s key, the named one first."""
    return (env_var, *KEY_ALIASES.get(env_var, ()))


def key_source(env_var: str) -> str | None:
    """The first of :func:`key_names` that is set (and not blank), or None."""
    for name in key_names(env_var):
        if os.environ.get(name, "").strip():
            return name
    return None


def api_key(env_var: str) -> str:
    """The key, stripped; "" when none of its variables is set."""
    source = key_source(env_var)
    return os.environ[source].strip() if source else ""


def missing_key_message(env_var: str) -> str:
    names = " or ".join(key_names(env_var))
    return f"environment variable {names} is not set"


def key_prefix(value: str, prefix_len: int = DEFAULT_PREFIX_LEN) -> str:
    """What may be printed of a key to check it: its first ``prefix_len`` characters (at most
    :data:`MAX_PREFIX_LEN`), or "(set)" when the key is too short to show any of it."""
    shown = max(0, min(prefix_len, MAX_PREFIX_LEN))
    if shown == 0 or len(value) < max(12, shown * _PREFIX_SHARE):
        return "(set)"
    return value[:shown] + "…"

"""Redaction of published text: e-mail addresses, phone numbers and keys become placeholders.

Each kind is found by a maintained library that works offline: phone numbers by
``phonenumbers`` (Google's libphonenumber: numbers in international form anywhere, national
ones of ``ARENA_RELEASE_PHONE_REGION``), keys and passwords by Yelp's ``detect-secrets`` (its
plugins for AWS, GitHub, OpenAI, Stripe, private keys, JWTs, high-entropy strings and
``password = ...`` assignments) and e-mail addresses by Django's own ``EmailValidator`` on
each word that has an ``@``, once the punctuation around it (Markdown's ``**``, backticks, a
closing ``?``) is trimmed.

detect-secrets scans line by line and knows only some key formats, so explicit rules come
first: a PEM private key block is removed whole (its body lines hold the key, not only the
``BEGIN`` line the plugin reports), and :data:`KEY_PATTERNS` match the provider keys the
plugins miss (OpenAI's ``sk-proj-``/``sk-``, Anthropic's ``sk-ant-``, Google's ``AIza``,
Tavily's ``tvly-``, GitHub, AWS, Slack tokens and JWTs).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import phonenumbers
from detect_secrets.core.scan import get_plugins
from detect_secrets.settings import default_settings
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator

EMAIL = "[email removed]"
PHONE = "[phone removed]"
KEY = "[key removed]"
KINDS = {EMAIL: "email", PHONE: "phone", KEY: "key"}

# A private key block, to its END line (or to the end of the text, when cut off).
PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.DOTALL)
_TOKEN_END = r"(?![A-Za-z0-9_-])"
KEY_PATTERNS = {
    # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-) and Anthropic (sk-ant-api03-, ...)
    "sk": re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}" + _TOKEN_END),
    "google": re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}" + _TOKEN_END),
    "tavily": re.compile(r"(?<![A-Za-z0-9])tvly-[A-Za-z0-9_-]{16,}" + _TOKEN_END),
    "github": re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}"
                         r"|github_pat_[A-Za-z0-9_]{22,})" + _TOKEN_END),
    "aws": re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
    "slack": re.compile(r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{10,}" + _TOKEN_END),
    "jwt": re.compile(r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}"
                      r"\.[A-Za-z0-9_-]{8,}" + _TOKEN_END),
}

_WORD_WITH_AT = re.compile(r"[^\s<>()\[\]{},;:\"']+@[^\s<>()\[\]{},;:\"']+")
# Punctuation that wraps or follows an address in prose and Markdown, never its ends.
_LEADING = "*_~`'\"¡¿"
_TRAILING = "*_~`'\".,!?…"
_validate_email = EmailValidator()


@dataclass
class Redactor:
    """Redacts texts and counts what it removed, by kind (``email``, ``phone``, ``key``)."""

    region: str = ""
    removed: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.region = self.region or settings.ARENA_RELEASE_PHONE_REGION

    def redact(self, text: str) -> str:
        if not text:
            return text
        text = self._keys(text)
        text = _WORD_WITH_AT.sub(self._email, text)
        return self._phones(text)

    def _email(self, match: re.Match) -> str:
        word = match.group(0)
        core = word.lstrip(_LEADING)
        before = word[:len(word) - len(core)]
        address = core.rstrip(_TRAILING)
        try:
            _validate_email(address)
        except ValidationError:
            return word
        self.removed["email"] += 1
        return before + EMAIL + core[len(address):]

    def _phones(self, text: str) -> str:
        found = list(phonenumbers.PhoneNumberMatcher(text, self.region))
        for match in reversed(found):
            text = text[:match.start] + PHONE + text[match.end:]
        self.removed["phone"] += len(found)
        return text

    def _keys(self, text: str) -> str:
        """Private key blocks and the provider keys of :data:`KEY_PATTERNS`, then every secret
        that one of detect-secrets' plugins finds in a line (as it scans a file: a high-entropy
        string only where it is quoted)."""
        for pattern in (PRIVATE_KEY_BLOCK, *KEY_PATTERNS.values()):
            text, n = pattern.subn(KEY, text)
            self.removed["key"] += n
        lines = text.split("\n")
        with default_settings():
            plugins = get_plugins()
            for i, line in enumerate(lines):
                secrets = {found.secret_value for plugin in plugins
                           for found in plugin.analyze_line(filename="published", line=line)
                           if found.secret_value and found.secret_value != KEY}
                if secrets:
                    lines[i] = self._remove(line, secrets)
        return "\n".join(lines)

    def _remove(self, line: str, secrets: set[str]) -> str:
        """``line`` with each found secret (several words, maybe) replaced by KEY, widened to
        the whole words at its ends: a plugin may report only a token's prefix (``ghp``)."""
        spans = []
        for secret in secrets:
            start = line.find(secret)
            while start != -1:
                end = start + len(secret)
                while start > 0 and not line[start - 1].isspace():
                    start -= 1
                while end < len(line) and not line[end].isspace():
                    end += 1
                spans.append((start, end))
                start = line.find(secret, end)
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        for start, end in reversed(merged):
            line = line[:start] + KEY + line[end:]
        self.removed["key"] += len(merged)
        return line

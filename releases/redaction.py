"""Redaction of published text: e-mail addresses, phone numbers and keys become placeholders.

Each kind is found by a maintained library that works offline: phone numbers by
``phonenumbers`` (Google's libphonenumber: numbers in international form anywhere, national
ones of ``ARENA_RELEASE_PHONE_REGION``), keys and passwords by Yelp's ``detect-secrets`` (its
plugins for AWS, GitHub, OpenAI, Stripe, private keys, JWTs, high-entropy strings and
``password = ...`` assignments) and e-mail addresses by Django's own ``EmailValidator`` on
each word that has an ``@``.
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

_WORD_WITH_AT = re.compile(r"[^\s<>()\[\]{},;:\"']+@[^\s<>()\[\]{},;:\"']+")
_NON_SPACE = re.compile(r"\S+")
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
        word = match.group(0).rstrip(".")
        try:
            _validate_email(word)
        except ValidationError:
            return match.group(0)
        self.removed["email"] += 1
        return EMAIL + match.group(0)[len(word):]

    def _phones(self, text: str) -> str:
        found = list(phonenumbers.PhoneNumberMatcher(text, self.region))
        for match in reversed(found):
            text = text[:match.start] + PHONE + text[match.end:]
        self.removed["phone"] += len(found)
        return text

    def _keys(self, text: str) -> str:
        """Each word holding a secret that one of detect-secrets' plugins finds in its line
        (as it scans a file: a high-entropy string only where it is quoted) becomes KEY; the
        whole word, since a plugin may report only a token's prefix (``ghp``)."""
        lines = text.split("\n")
        with default_settings():
            plugins = get_plugins()
            for i, line in enumerate(lines):
                secrets = {found.secret_value for plugin in plugins
                           for found in plugin.analyze_line(filename="published", line=line)
                           if found.secret_value}
                if secrets:
                    lines[i] = _NON_SPACE.sub(lambda m, s=secrets: self._key(m, s), line)
        return "\n".join(lines)

    def _key(self, match: re.Match, secrets: set[str]) -> str:
        if not any(secret in match.group(0) for secret in secrets):
            return match.group(0)
        self.removed["key"] += 1
        return KEY

"""Published text loses e-mail addresses, phone numbers and keys, and nothing else."""

import pytest

from releases.redaction import EMAIL, KEY, PHONE, Redactor


@pytest.fixture
def redactor():
    return Redactor(region="US")


def test_an_email_address_is_removed_and_counted(redactor):
    text = redactor.redact("Write to jo.doe+arena@example.co.uk, please.")
    assert text == f"Write to {EMAIL}, please."
    assert redactor.removed["email"] == 1


def test_phone_numbers_international_and_national_are_removed(redactor):
    text = redactor.redact("Call +44 20 7946 0958 or (415) 555-2671 today.")
    assert text == f"Call {PHONE} or {PHONE} today."
    assert redactor.removed["phone"] == 2


@pytest.mark.parametrize("secret", [
    "AKIAIOSFODNN7EXAMPLF",  # an AWS access key id
    "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",  # a GitHub token
    "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789abcdefghijklmnopqrstuvwxyz1",
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8xYz1a",  # OpenAI
    "sk-ant-api03-Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2cBa1zYx0wVu9tSr8qPo7nMl6kJi5hGf4eDc3bA-AA",
    "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",  # a plain (legacy) OpenAI key
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",  # a Google API key
    "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",  # a Tavily key
    "xoxb-1234567890-0987654321-Ab3dEf6hIj9kLm2nOp5qRs8t",  # a Slack bot token
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",  # a JWT
])
@pytest.mark.parametrize("around", ["my key is {} ok", "`{}`", "KEY={}", "**{}**."])
def test_keys_are_removed(redactor, secret, around):
    text = redactor.redact(around.format(secret))
    assert secret not in text and KEY in text
    assert not any(part in text for part in _long_parts(secret))
    assert redactor.removed["key"] == 1


def _long_parts(secret: str) -> list[str]:
    """The secret's runs of 8 or more letters and digits: none may survive."""
    import re

    return re.findall(r"[A-Za-z0-9]{8,}", secret)


PEM_BODY = ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
            "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu")


@pytest.mark.parametrize("kind", ["RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY",
                                  "EC PRIVATE KEY"])
def test_a_private_key_block_is_removed_whole(redactor, kind):
    block = "\n".join((f"-----BEGIN {kind}-----", *PEM_BODY, f"-----END {kind}-----"))
    text = redactor.redact(f"Here is my key:\n{block}\nThanks!")
    assert text == f"Here is my key:\n{KEY}\nThanks!"
    assert redactor.removed["key"] == 1


def test_a_private_key_block_cut_off_is_removed_to_the_end(redactor):
    text = redactor.redact("key:\n-----BEGIN PRIVATE KEY-----\n" + "\n".join(PEM_BODY))
    assert text == f"key:\n{KEY}"


@pytest.mark.parametrize("line", [
    'password = "correct horse battery staple"',
    "db_password: 'purple monkey dishwasher 42'",
])
def test_a_secret_of_several_words_is_removed_whole(redactor, line):
    text = redactor.redact(f"config:\n{line}\nend")
    for word in ("horse", "battery", "staple", "monkey", "dishwasher"):
        assert word not in text
    assert KEY in text and text.startswith("config:\n") and text.endswith("\nend")


@pytest.mark.parametrize(("written", "expected"), [
    ("**john@example.com**", f"**{EMAIL}**"),
    ("`john@example.com`", f"`{EMAIL}`"),
    ("Is it john@example.com?", f"Is it {EMAIL}?"),
    ("Mail john@example.com!", f"Mail {EMAIL}!"),
    ("(john@example.com)", f"({EMAIL})"),
    ("<john@example.com>", f"<{EMAIL}>"),
    ("_john@example.com_, then", f"_{EMAIL}_, then"),
    ('"john@example.com".', f'"{EMAIL}".'),
])
def test_an_email_address_wrapped_or_followed_by_punctuation_is_removed(redactor, written,
                                                                        expected):
    assert redactor.redact(written) == expected
    assert redactor.removed["email"] == 1


def test_a_password_assignment_is_removed(redactor):
    text = redactor.redact('password = "hunter2-Very-Secret"')
    assert "hunter2-Very-Secret" not in text


def test_ordinary_text_is_left_as_it_is(redactor):
    text = "The year 2024 had 366 days; email is a word; a@b is no address. Version 1.2.3."
    assert redactor.redact(text) == text
    assert sum(redactor.removed.values()) == 0

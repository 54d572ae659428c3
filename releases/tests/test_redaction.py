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
])
def test_keys_are_removed(redactor, secret):
    text = redactor.redact(f"my key is {secret} ok")
    assert secret not in text and KEY in text
    assert redactor.removed["key"] == 1


def test_a_password_assignment_is_removed(redactor):
    text = redactor.redact('password = "hunter2-Very-Secret"')
    assert "hunter2-Very-Secret" not in text


def test_ordinary_text_is_left_as_it_is(redactor):
    text = "The year 2024 had 366 days; email is a word; a@b is no address. Version 1.2.3."
    assert redactor.redact(text) == text
    assert sum(redactor.removed.values()) == 0

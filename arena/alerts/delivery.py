"""Telling the operators: one notice by e-mail to ``ARENA_ALERT_EMAILS`` and as Slack-compatible
JSON (``{"text": ...}``, what Slack's, Mattermost's and Discord's ``/slack`` incoming webhooks
take) POSTed to ``ARENA_ALERT_WEBHOOK_URL``.

A channel that fails (an SMTP error; a webhook that answers an error status, times out or
refuses the connection) is reported back as one line, never raised: the alert stays recorded
with what went wrong, and the evaluation goes on. The lines never hold the webhook's URL (a
Slack webhook's URL is its secret), nor does the log.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail

logger = logging.getLogger(__name__)

# Short: an evaluation holds its beat slot while it waits, and a receiver this slow is down.
WEBHOOK_TIMEOUT_SECONDS = 5.0
SUBJECT_PREFIX = "[Arena] "
WEBHOOK_STATUS = "webhook: answered HTTP {status}"
WEBHOOK_NO_ANSWER = "webhook: no answer ({kind})"
EMAIL_FAILED = "e-mail: not sent ({kind})"


def _webhook(text: str) -> str | None:
    import httpx  # noqa: PLC0415 - httpx is not loaded by django.setup() (test_process_start)

    try:
        answer = httpx.post(settings.ARENA_ALERT_WEBHOOK_URL, json={"text": text},
                            timeout=WEBHOOK_TIMEOUT_SECONDS)
    except httpx.HTTPError as exc:
        return WEBHOOK_NO_ANSWER.format(kind=type(exc).__name__)
    if answer.is_error:
        return WEBHOOK_STATUS.format(status=answer.status_code)
    return None


def _email(subject: str, text: str) -> str | None:
    try:
        send_mail(SUBJECT_PREFIX + subject, text, None, settings.ARENA_ALERT_EMAILS)
    except Exception as exc:  # smtplib's, socket's: whatever the server did
        return EMAIL_FAILED.format(kind=type(exc).__name__)
    return None


def notice_deliver(*, subject: str, text: str) -> list[str]:
    """Send the notice through every configured channel; what failed, one line each (empty:
    every channel took it, or none is configured)."""
    errors = []
    if settings.ARENA_ALERT_EMAILS and (error := _email(subject, text)):
        errors.append(error)
    if settings.ARENA_ALERT_WEBHOOK_URL and (error := _webhook(f"{subject}\n{text}")):
        errors.append(error)
    for error in errors:
        logger.warning("alert notice %r not delivered: %s", subject, error)
    return errors

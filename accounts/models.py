"""A person's account beside Django's user: the key their rows are kept under, what staff
decided about them, their API tokens and their signed-in sessions."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.crypto import get_random_string

KEY_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"  # a session key's own characters


def new_visitor_key() -> str:
    return get_random_string(32, KEY_CHARS)


class Profile(models.Model):
    """One per user. ``visitor_key`` stands in every mode's ``session_key`` columns for the
    person once signed in (arena.sessions.session_key_for), so what they do follows them."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="arena_profile")
    visitor_key = models.CharField(max_length=64, unique=True, default=new_visitor_key,
                                   editable=False)
    flagged = models.BooleanField(default=False, help_text="Under review: votes still count.")
    flag_reason = models.CharField(max_length=200, blank=True)
    banned = models.BooleanField(
        default=False, help_text="Votes stop counting at the next rating run (kept, marked).")
    banned_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"profile of {self.user}"


class ApiToken(models.Model):
    """A token for scripts: only its SHA-256 is stored; the token is shown once."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="arena_tokens")
    name = models.CharField(max_length=80)
    prefix = models.CharField(max_length=16, help_text="The token's start, to tell it apart.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class SignIn(models.Model):
    """A session a person signed in with: "sign out everywhere" ends each of them."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="arena_sign_ins")
    session_key = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.user} at {self.created_at:%Y-%m-%d %H:%M}"

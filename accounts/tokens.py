"""API tokens (a minimal stand-in: the tokens' own branch replaces this module).

A token is shown once; only its SHA-256 digest and its first characters are stored."""

from __future__ import annotations

import hashlib
import secrets

from django.utils import timezone

from accounts.models import ApiToken

TOKEN_PREFIX = "arena_"
NAME_REQUIRED = "Give the token a name (up to 80 characters)."


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """A new token for ``user``: the row and the token itself (shown once, never stored)."""
    name = (name or "").strip()
    if not name or len(name) > 80:
        raise ValueError(NAME_REQUIRED)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(user=user, name=name, prefix=token[:12],
                                  digest=_digest(token))
    return row, token


def token_list(*, user) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user, revoked_at__isnull=True))


def token_revoke(*, user, token_id) -> bool:
    """Revoke one of ``user``'s tokens; False when it is not theirs or already revoked."""
    return bool(ApiToken.objects.filter(user=user, pk=token_id, revoked_at__isnull=True)
                .update(revoked_at=timezone.now()))

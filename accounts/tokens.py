"""API tokens: a person's scripts act as them with ``Authorization: Bearer <token>``.

A token is ``arena_`` and 43 random URL-safe characters (32 bytes): the prefix lets a person,
a log scrubber or a secret scanner tell it for an arena token. Only its SHA-256 is stored
(``ApiToken.digest``) with its first characters for telling tokens apart (``prefix``); the
token itself is returned once, by :func:`token_create`, and never again. A random 256-bit
secret needs no slow hash: nothing can be guessed from its digest.

:func:`token_resolve` is what a request's Bearer header is checked with
(:class:`accounts.middleware.ApiTokenAuthentication`): the token's person, unless it was
revoked or the person can no longer sign in. Its last use is written at most once a minute,
so a busy script costs no write per request.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db import models
from django.utils import timezone

from accounts.models import ApiToken
from arena.errors import RuleError
from arena.inputs import clean_text, parse_uuid

TOKEN_PREFIX = "arena_"
SECRET_BYTES = 32
SHOWN_CHARS = len(TOKEN_PREFIX) + 6  # what ``prefix`` keeps of a token: "arena_" and 6 more
NAME_MAX_CHARS = 80  # ApiToken.name
MAX_ACTIVE_TOKENS = 50
LAST_USED_EVERY = timedelta(minutes=1)

NAME_EMPTY = "Name the token (what it is for, e.g. \"nightly eval script\")."
NAME_TOO_LONG = "A token's name is at most {limit} characters (this one has {length})."
TOO_MANY_TOKENS = ("You have {limit} tokens already: revoke one you no longer use before "
                   "creating another.")


class TokenRefused(RuleError, ValueError):
    """A token that cannot be made: the API answers it as any broken rule; the profile's form,
    which catches a ``ValueError``, shows ``str(exc)`` (the message)."""


def token_digest(token: str) -> str:
    """What is stored of a token: its SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_create(user, name: str) -> tuple[ApiToken, str]:
    """A new token of ``user`` named ``name``: the row and the token itself, which only this
    answer ever holds. :class:`TokenRefused` for an empty name (400), one that cannot be
    stored (400) or a long one (422), and past :data:`MAX_ACTIVE_TOKENS` (409)."""
    try:
        name = clean_text(name, empty=NAME_EMPTY, too_long=NAME_TOO_LONG,
                          limit=NAME_MAX_CHARS, field="The token's name")
    except RuleError as exc:
        raise TokenRefused(exc.message, status=exc.status) from None
    if token_list(user).count() >= MAX_ACTIVE_TOKENS:
        raise TokenRefused(TOO_MANY_TOKENS.format(limit=MAX_ACTIVE_TOKENS), status=409)
    secret = TOKEN_PREFIX + secrets.token_urlsafe(SECRET_BYTES)
    token = ApiToken.objects.create(user=user, name=name, prefix=secret[:SHOWN_CHARS],
                                    digest=token_digest(secret))
    return token, secret


def token_list(user) -> models.QuerySet[ApiToken]:
    """The person's tokens that still work, newest first (revoked ones are kept, not shown)."""
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True).order_by("-created_at")


def token_revoke(user, token_id) -> bool:  # noqa: ANN001 - a UUID or its text, from a URL
    """Revoke one of the person's working tokens: whether there was one by that id (another
    person's token, or one revoked already, is not theirs to revoke)."""
    token_id = parse_uuid(token_id)
    if token_id is None:
        return False
    revoked = token_list(user).filter(pk=token_id).update(revoked_at=timezone.now())
    return revoked == 1


def token_resolve(token: str) -> ApiToken | None:
    """The working token this is (its ``user`` loaded), or None: unknown, revoked, or its
    person inactive. Notes the use, at most once a minute."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    found = (ApiToken.objects.select_related("user")
             .filter(digest=token_digest(token), revoked_at__isnull=True).first())
    if found is None or not found.user.is_active:
        return None
    now = timezone.now()
    if found.last_used_at is None or now - found.last_used_at >= LAST_USED_EVERY:
        stale = models.Q(last_used_at__isnull=True) | models.Q(
            last_used_at__lt=now - LAST_USED_EVERY)
        ApiToken.objects.filter(stale, pk=found.pk).update(last_used_at=now)
        found.last_used_at = now
    return found

"""``/api/tokens``: a person's API tokens, for their scripts. Thin: parse, call, shape.

``POST /api/tokens`` ``{"name": ...}`` creates one and answers it, the only time the token is
ever shown; ``GET /api/tokens`` lists the working ones (no secret, only their first
characters); ``DELETE /api/tokens/{id}`` revokes one (404 for an id that is not one of the
person's working tokens). Each needs the person: a signed-in browser session, or one of their
tokens (``Authorization: Bearer <token>``, :mod:`accounts.middleware`); anyone else gets 401.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.http import HttpRequest
from ninja import Router, Schema, Status
from ninja.security import APIKeyCookie, HttpBearer

from accounts import tokens
from arena.api_errors import errors
from arena.errors import RuleError

SIGN_IN_FIRST = ("Sign in first (/accounts/login/), or send one of your API tokens as "
                 "'Authorization: Bearer <token>'.")
TOKEN_NOT_FOUND = "You have no working API token with this id."

router = Router(tags=["tokens"])


class SignedInSession(APIKeyCookie):
    """The browser session of a signed-in person (its writes need the site's Origin or the
    CSRF token, as every API write does)."""

    openapi_description = "The session cookie of a signed-in person."

    def __init__(self) -> None:
        self.param_name = settings.SESSION_COOKIE_NAME
        super().__init__(csrf=False)  # the platform's write guard checks every write

    def __call__(self, request: HttpRequest):  # noqa: ANN204 - the user, as ninja's auth
        user = request.user
        if getattr(request, "arena_api_token", None) is None and user.is_authenticated:
            return user
        return None

    def authenticate(self, request: HttpRequest, key: str | None) -> None:
        return None  # __call__ decides


class ApiTokenBearer(HttpBearer):
    """One of the person's API tokens. Checked before any view runs (an unknown or revoked
    one is a 401 there); the last of the ways tried, so its absence is the 401 here."""

    openapi_description = ("An API token (POST /api/tokens), as 'Authorization: Bearer "
                           "arena_...'.")

    def __call__(self, request: HttpRequest):  # noqa: ANN204 - the user, as ninja's auth
        if getattr(request, "arena_api_token", None) is not None:
            return request.user
        raise RuleError(SIGN_IN_FIRST, status=401)

    def authenticate(self, request: HttpRequest, token: str) -> None:
        return None  # __call__ decides


PERSON = [SignedInSession(), ApiTokenBearer()]


class TokenIn(Schema):
    name: str


class TokenOut(Schema):
    id: UUID
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None


class TokenCreatedOut(TokenOut):
    token: str


class TokenListOut(Schema):
    tokens: list[TokenOut]


@router.post("/tokens", auth=PERSON,
             response={201: TokenCreatedOut, **errors(400, 401, 409, 422)})
def token_create(request: HttpRequest, payload: TokenIn):
    """A new API token named ``name``. The answer's ``token`` is the only time it is shown:
    keep it (only its SHA-256 is stored). Send it as ``Authorization: Bearer <token>`` to any
    JSON API to act as yourself, with your limits. 409 past 50 working tokens."""
    made, secret = tokens.token_create(request.auth, payload.name)
    return Status(201, {**TokenOut.from_orm(made).dict(), "token": secret})


@router.get("/tokens", auth=PERSON, response={200: TokenListOut, **errors(401)})
def token_list(request: HttpRequest):
    """Your working API tokens, newest first: names, first characters, when created and last
    used (to the minute). Never the tokens themselves."""
    return {"tokens": list(tokens.token_list(request.auth))}


@router.delete("/tokens/{token_id}", auth=PERSON, response={204: None, **errors(401, 404)})
def token_revoke(request: HttpRequest, token_id: str):
    """Revoke one of your tokens: from now on it gets 401 everywhere."""
    if not tokens.token_revoke(request.auth, token_id):
        raise RuleError(TOKEN_NOT_FOUND, status=404)
    return Status(204, None)

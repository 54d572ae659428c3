"""The signed-in person's own data as JSON: ``GET /api/me``, ``GET /api/me/leaderboard``,
``GET /api/me/export`` and ``DELETE /api/me``. A signed-in session or an API token (the
account whose key the token's authentication set); 401 otherwise."""

from __future__ import annotations

from django.contrib.auth import logout
from django.http import HttpRequest
from ninja import Router, Status

from accounts.deletion import account_delete
from accounts.export import personal_export
from accounts.leaderboard import personal_board
from accounts.models import Profile
from accounts.selectors import profile_view
from accounts.services import profile_of
from arena.api_errors import errors
from arena.errors import RuleError

NOT_SIGNED_IN = "Sign in (or send an API token as Authorization: Bearer <token>) to read this."
router = Router(tags=["me"])


def signed_in(request: HttpRequest):  # noqa: ANN201 - the user, as ninja's request.auth
    """The signed-in user, or the person an API token stands for (``arena_account_key``, the
    key arena.sessions answers for the token's account)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return user
    token_key = getattr(request, "arena_account_key", None)
    profile = (Profile.objects.select_related("user").filter(visitor_key=token_key).first()
               if token_key else None)
    if profile is None:
        raise RuleError(NOT_SIGNED_IN, status=401)
    return profile.user


@router.get("/me", auth=signed_in, response={200: dict, **errors(401)})
def me(request: HttpRequest):
    """Your battles and sessions, panels, debates, voice battles, votes in every mode, debate
    points and wagers, and API tokens (names and prefixes)."""
    return profile_view(user=request.auth).as_json()


@router.get("/me/leaderboard", auth=signed_in, response={200: dict, **errors(401)})
def me_leaderboard(request: HttpRequest):
    """Your personal leaderboard: Bradley–Terry (sandwich 95 % intervals) on your own counted
    text-battle votes, each model with its global rating and rank beside it."""
    return personal_board(visitor_key=profile_of(request.auth).visitor_key).as_json()


@router.get("/me/export", auth=signed_in, response={200: dict, **errors(401)})
def me_export(request: HttpRequest):
    """Everything the arena keeps tied to you, as one JSON document."""
    return personal_export(user=request.auth)


@router.delete("/me", auth=signed_in, response={204: None, **errors(401)})
def me_delete(request: HttpRequest):
    """Delete your account and personal data; your votes stay as anonymised records (the
    public boards do not change). Cannot be undone."""
    user = request.auth
    if getattr(request, "user", None) is not None and request.user.is_authenticated:
        logout(request)  # this browser's session; the others end with the account
    account_delete(user=user)
    return Status(204, None)

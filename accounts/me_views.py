"""The profile page (/me/), its forms (tokens, export, deletion) and the privacy page."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.deletion import CONFIRMATION, NOT_CONFIRMED, account_delete
from accounts.export import personal_export
from accounts.leaderboard import personal_board
from accounts.selectors import profile_view
from accounts.services import profile_of

TOKEN_REVOKED = "The token was revoked: scripts using it now get 401."
TOKEN_NOT_FOUND = "No such token of yours (or it was already revoked)."


def _page(request: HttpRequest, *, status: int = 200, **extra) -> HttpResponse:
    context = {
        "me": profile_view(user=request.user),
        "board": personal_board(visitor_key=profile_of(request.user).visitor_key),
        "confirmation": CONFIRMATION,
        **extra,
    }
    return render(request, "accounts/me.html", context, status=status)


@require_GET
@login_required
def me(request: HttpRequest) -> HttpResponse:
    return _page(request)


@require_POST
@login_required
def token_create_form(request: HttpRequest) -> HttpResponse:
    from accounts.tokens import token_create  # noqa: PLC0415 - the tokens' branch's module

    try:
        _row, token = token_create(user=request.user, name=request.POST.get("name", ""))
    except ValueError as exc:
        return _page(request, status=400, token_error=str(exc))
    # Shown once, on this answer only: never stored, never redirected with.
    response = _page(request, status=201, new_token=token)
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@login_required
def token_revoke_form(request: HttpRequest, token_id) -> HttpResponse:
    from accounts.tokens import token_revoke  # noqa: PLC0415 - as token_create

    if not token_revoke(user=request.user, token_id=token_id):
        return _page(request, status=404, token_error=TOKEN_NOT_FOUND)
    messages.success(request, TOKEN_REVOKED)
    return redirect("/me/#tokens")


@require_GET
@login_required
def export(request: HttpRequest) -> HttpResponse:
    data = personal_export(user=request.user)
    body = json.dumps(data, cls=DjangoJSONEncoder, indent=2, ensure_ascii=False)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    name = f"arena-export-{timezone.now():%Y-%m-%d}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@login_required
def delete(request: HttpRequest) -> HttpResponse:
    if request.POST.get("confirmation", "").strip().lower() != CONFIRMATION:
        return _page(request, status=400, delete_error=NOT_CONFIRMED)
    user = request.user
    logout(request)
    account_delete(user=user)
    return render(request, "accounts/deleted.html")


@require_GET
def privacy(request: HttpRequest) -> HttpResponse:
    return render(request, "accounts/privacy.html",
                  {"session_days": settings.SESSION_COOKIE_AGE // 86400})

"""Accounts' pages beside allauth's: signing out everywhere."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponseRedirect
from django.views.decorators.http import require_POST

from accounts.services import sign_out_everywhere

SIGNED_OUT_EVERYWHERE = "Signed out on every browser and device ({count} session{s})."


@require_POST
@login_required
def sign_out_everywhere_view(request: HttpRequest) -> HttpResponseRedirect:
    """Ends every session the person signed in with, this one too (a POST: a link cannot)."""
    count = sign_out_everywhere(request.user)
    logout(request)
    messages.success(request, SIGNED_OUT_EVERYWHERE.format(count=count,
                                                            s="" if count == 1 else "s"))
    return HttpResponseRedirect("/")

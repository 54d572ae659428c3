"""The top bar's account corner on every page: "Sign in", or the person's e-mail and "Sign
out" (templates/account/_topbar.html)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.urls import reverse
from django.utils.functional import SimpleLazyObject


def _signed_in_as(request) -> str:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return ""
    return user.email or user.get_username()


def _sign_in_url(request) -> str:
    """The sign-in page, coming back afterwards to the page it was asked from."""
    url = reverse("account_login")
    path = getattr(request, "path", "")
    if not path or path == "/" or path.startswith("/accounts/"):
        return url
    return f"{url}?{urlencode({'next': path})}"


def account(request):
    # Lazy: a fragment that shows no top bar reads neither the session nor the user.
    return {"signed_in_as": SimpleLazyObject(lambda: _signed_in_as(request)),
            "sign_in_url": SimpleLazyObject(lambda: _sign_in_url(request))}

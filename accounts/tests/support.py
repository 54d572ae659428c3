"""People with accounts, signed in the way a browser signs in (allauth's form)."""

from __future__ import annotations

from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.test import Client

PASSWORD = "a long enough passphrase 42"


def person(email: str = "ada@example.com", *, verified: bool = True):
    user = get_user_model().objects.create_user(username=email.split("@")[0], email=email,
                                                password=PASSWORD)
    EmailAddress.objects.create(user=user, email=email, verified=verified, primary=True)
    return user


def sign_in(client: Client, email: str = "ada@example.com") -> None:
    """Through the sign-in form, as a browser does: the session's key rotates."""
    answer = client.post("/accounts/login/", {"login": email, "password": PASSWORD})
    assert answer.status_code == 302, answer.content[:500]

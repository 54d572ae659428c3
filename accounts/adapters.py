"""allauth's hooks for the arena: what a GitHub or Google sign-in keeps of the person.

Privacy (issue 35): nothing beyond the e-mail address and the provider's account id. allauth
would copy the provider's whole profile into ``SocialAccount.extra_data`` (name, avatar,
location, company...) and the name onto the user; here the user gets the e-mail alone (the
username is made from it, as for an e-mail sign-up), of the addresses a provider lists only
the one signed in with is kept, and ``extra_data`` is emptied before the account is saved or
updated (the id is ``SocialAccount.uid``)."""

from __future__ import annotations

from allauth.account.utils import user_email
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialApp
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.http import Http404


class ProviderNotConfigured(Http404, SocialApp.DoesNotExist):
    """A provider whose client id and secret are not in the environment: a 404 for a page
    (allauth's own would be a 500), still what allauth's callers expect."""


def _valid_email(value: object) -> str:
    try:
        validate_email(value)
    except ValidationError:
        return ""
    return str(value)


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def get_provider(self, request, provider, client_id=None):
        try:
            return super().get_provider(request, provider, client_id=client_id)
        except SocialApp.DoesNotExist as exc:
            raise ProviderNotConfigured(f"{provider} sign-in is not configured") from exc

    def populate_user(self, request, sociallogin, data):
        """Called as the provider's answer becomes a sign-in, before allauth looks up or saves
        the account (an existing account's ``extra_data`` is overwritten with this one's)."""
        sociallogin.account.extra_data = {}
        email = _valid_email(data.get("email"))
        # GitHub lists every address of the person's: only the one signed in with is kept.
        sociallogin.email_addresses = [address for address in sociallogin.email_addresses
                                       if email and address.email.lower() == email.lower()]
        user = sociallogin.user
        user_email(user, email)
        return user

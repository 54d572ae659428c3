"""Sign-in moves the anonymous visitor's work to the account (accounts.services)."""

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from accounts.services import account_signed_in


@receiver(user_logged_in, dispatch_uid="accounts-signed-in")
def _signed_in(sender, request, user, **kwargs) -> None:  # noqa: ARG001
    if request is not None and hasattr(request, "session"):
        account_signed_in(request, user)


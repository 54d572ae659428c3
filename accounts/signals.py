"""Sign-in moves the anonymous visitor's work to the account (accounts.services)."""

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from accounts.services import account_signed_in


@receiver(user_logged_in, dispatch_uid="accounts-signed-in")
def _signed_in(sender, request, user, **kwargs) -> None:  # noqa: ARG001
    if request is not None and hasattr(request, "session"):
        account_signed_in(request, user)


@receiver(user_logged_in, dispatch_uid="accounts-ban-followed")
def _ban_followed(sender, request, user, **kwargs) -> None:  # noqa: ARG001
    """A ban the anonymous session had moved to the account with its rows: it says so."""
    from accounts.bans import account_ban_sync  # noqa: PLC0415 - after the models load

    account_ban_sync(user=user)

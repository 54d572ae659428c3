from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Accounts: sign-in (django-allauth), the anonymous visitor's work moved to the account,
    API tokens. Anonymous use stays first-class: no mode asks anyone to sign in."""

    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import signals  # noqa: F401, PLC0415 - connects the sign-in receiver

from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Not a mode: no place in the navigation; staff reach it from the admin's index."""

    name = "ops"
    verbose_name = "Operations"

from django.apps import AppConfig


class PanelsConfig(AppConfig):
    name = "panels"
    verbose_name = "Panel mode"

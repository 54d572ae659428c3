from django.apps import AppConfig


class DebatesConfig(AppConfig):
    name = "debates"

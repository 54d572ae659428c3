from django.apps import AppConfig


class BattlesConfig(AppConfig):
    name = "battles"

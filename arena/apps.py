from django.apps import AppConfig


class ArenaConfig(AppConfig):
    name = "arena"
    verbose_name = "Arena core"

    def ready(self) -> None:
        from arena.celery import app
        from arena.modes import beat_schedule

        # Each mode's periodic tasks join the platform's own (settings.CELERY_BEAT_SCHEDULE).
        app.conf.beat_schedule = {**app.conf.beat_schedule, **beat_schedule()}

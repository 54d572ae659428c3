from django.apps import AppConfig


class ArenaConfig(AppConfig):
    name = "arena"
    verbose_name = "Arena core"

    def ready(self) -> None:
        # Kept light: every process and command runs this (django.setup()). The Celery app
        # adds the modes' beat entries itself (arena.celery), and the model registry's reads
        # connect the receiver that clears their cache (arena.selectors).
        from django.db.backends.signals import connection_created

        from arena import checks  # noqa: F401 - registers the deployment checks
        from arena.alerts.slow_queries import install

        # Every connection of every process times its queries for the slow-queries alert.
        connection_created.connect(install, dispatch_uid="arena-alerts-slow-queries")

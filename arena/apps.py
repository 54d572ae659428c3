from django.apps import AppConfig


class ArenaConfig(AppConfig):
    name = "arena"
    verbose_name = "Arena core"

    def ready(self) -> None:
        # The Celery app adds the modes' beat entries itself (arena.celery): django.setup(),
        # which every process and command runs, loads no Celery.
        from django.db.models.signals import post_delete, post_save

        from arena import checks  # noqa: F401 - registers the deployment checks
        from arena.contests import counting  # noqa: F401 - a cleared flag counts votes again
        from arena.models import AIModel
        from arena.selectors import model_endpoints_forget

        for signal in (post_save, post_delete):
            signal.connect(model_endpoints_forget, sender=AIModel,
                           dispatch_uid=f"arena-endpoints-{signal}")

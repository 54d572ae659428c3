"""Load the models file (fixtures/models.yaml or ARENA_MODELS_FILE) into the registry."""

from django.core.management.base import BaseCommand, CommandError

from arena.model_config import ModelConfigError
from arena.services import models_sync


class Command(BaseCommand):
    help = "Upsert the models file into the model registry (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--file", help="models YAML to load instead of ARENA_MODELS_FILE")

    def handle(self, *args, file=None, **options):
        try:
            result = models_sync(path=file)
        except ModelConfigError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"models: {len(result.created)} created, {len(result.updated)} updated, "
            f"{len(result.retired)} no longer listed"
        )

"""Print every model, whether it can be used now, and why not."""

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.table import Table

from arena.model_config import ModelConfigError
from arena.selectors import model_list_with_availability
from arena.services import models_sync


class Command(BaseCommand):
    help = "Check the models file and show each model's availability and reason."

    def add_arguments(self, parser):
        parser.add_argument(
            "--ping", action="store_true", help="also probe each endpoint over the network"
        )

    def handle(self, *args, ping=False, **options):
        try:
            models_sync()
        except ModelConfigError as exc:
            raise CommandError(str(exc)) from None
        table = Table(title="Models")
        for column in ("id", "name", "kind", "provider", "available"):
            table.add_column(column, no_wrap=True)
        table.add_column("reason", no_wrap=True)
        rows = model_list_with_availability(ping=ping)
        for model, availability in rows:
            table.add_row(
                model.slug,
                model.name,
                model.provider_kind,
                model.provider,
                "[green]yes[/green]" if availability.available else "[red]no[/red]",
                availability.reason,
            )
        Console(file=self.stdout, width=250).print(table)
        usable = sum(1 for _, availability in rows if availability.available)
        self.stdout.write(f"{usable} of {len(rows)} models available")

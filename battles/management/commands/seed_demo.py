"""Create (or with --purge remove) demo battles so a new install has data to show."""

from django.core.management.base import BaseCommand, CommandError

from battles.demo import demo_purge, demo_seed


class Command(BaseCommand):
    help = "Create at least 300 voted demo battles across the configured models (no model call)."

    def add_arguments(self, parser):
        parser.add_argument("--battles", type=int, default=320)
        parser.add_argument("--seed", type=int, default=7, help="random seed")
        parser.add_argument("--purge", action="store_true", help="remove every demo battle")

    def handle(self, *args, battles, seed, purge, **options):
        if purge:
            self.stdout.write(f"removed {demo_purge()} demo rows")
            return
        try:
            created = demo_seed(battles=battles, seed=seed)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"created {created} voted demo battles")

"""Compare what the ledger recorded with a provider's usage export (arena.costs)."""

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from arena.costs import UsageExportError, cost_comparison


class Command(BaseCommand):
    help = ("Compare each model's cost recorded by the arena with a provider's usage export "
            "(CSV), over the export's days, and print the difference per model.")

    def add_arguments(self, parser):
        parser.add_argument("export", help="the provider's usage export (CSV)")
        parser.add_argument("--since", type=date.fromisoformat, help="first day (YYYY-MM-DD)")
        parser.add_argument("--until", type=date.fromisoformat, help="last day (YYYY-MM-DD)")

    def handle(self, *args, export, since=None, until=None, **options):
        try:
            result = cost_comparison(export, first_day=since, last_day=until)
        except UsageExportError as exc:
            raise CommandError(str(exc)) from None
        period = (f"{result.first_day or 'the start'} to {result.last_day or 'now'}")
        self.stdout.write(f"Costs from {period} (US dollars):")
        self.stdout.write(f"{'model':<32} {'recorded':>12} {'billed':>12} {'difference':>12}")
        for line in result.lines:
            self.stdout.write(f"{line.model:<32} {line.recorded_usd:>12.4f} "
                              f"{line.billed_usd:>12.4f} {line.difference_usd:>+12.4f}")
        recorded = sum(line.recorded_usd for line in result.lines)
        billed = sum(line.billed_usd for line in result.lines)
        self.stdout.write(f"{'total':<32} {recorded:>12.4f} {billed:>12.4f} "
                          f"{recorded - billed:>+12.4f}")

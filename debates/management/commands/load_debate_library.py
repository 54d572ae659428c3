"""Upsert the debate library (fixtures/debates/: topics with evidence, personas, the
calibration's refutations) into the database; idempotent."""

from django.core.management.base import BaseCommand

from debates.topics import library_load


class Command(BaseCommand):
    help = "Load fixtures/debates/ (topics, evidence, personas) into the database."

    def handle(self, *args, **options):
        created = library_load()
        self.stdout.write(", ".join(f"{n} {kind} created" for kind, n in created.items()))

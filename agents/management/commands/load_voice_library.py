from django.core.management.base import BaseCommand

from agents.library import library_load


class Command(BaseCommand):
    help = "Create or update the voice scenarios and agent configurations from fixtures/voice/."

    def handle(self, *args, **options):
        scenarios, agents = library_load()
        self.stdout.write(f"{scenarios} scenarios and {agents} agent configurations loaded.")

from django.core.management.base import BaseCommand

from agents.adapters import PROVIDER_KEYS, agent_problem, provider_ping
from agents.models import AgentConfiguration


class Command(BaseCommand):
    help = ("Print every voice agent configuration and whether it can take calls now (and why "
            "not); with --ping, also ask each managed provider whether it accepts our key.")

    def add_arguments(self, parser):
        parser.add_argument("--ping", action="store_true",
                            help="Call Vapi's and Retell's APIs once each (keys that are set).")

    def handle(self, *args, **options):
        pings: dict[str, str | None] = {}
        ready = 0
        for config in AgentConfiguration.objects.order_by("provider", "name"):
            problem = agent_problem(config)
            if problem is None and options["ping"] and config.provider in PROVIDER_KEYS:
                if config.provider not in pings:
                    pings[config.provider] = provider_ping(config.provider)
                if pings[config.provider]:
                    problem = f"the provider refused a ping: {pings[config.provider]}"
            ready += problem is None
            state = "ready" if problem is None else f"unavailable: {problem}"
            if problem is None and config.provider in pings:
                state = "ready (the provider accepted our key)"
            self.stdout.write(f"{config.slug:<24} {config.get_provider_display():<22} {state}")
        self.stdout.write(f"{ready} of {AgentConfiguration.objects.count()} agents can take calls; "
                          "a voice battle needs two.")

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Print every voice agent configuration and whether it can take calls now (and why not)."

    def handle(self, *args, **options):
        from agents.adapters import agent_problem
        from agents.models import AgentConfiguration

        ready = 0
        for config in AgentConfiguration.objects.order_by("provider", "name"):
            problem = agent_problem(config)
            ready += problem is None
            state = "ready" if problem is None else f"unavailable: {problem}"
            self.stdout.write(f"{config.slug:<24} {config.get_provider_display():<22} {state}")
        self.stdout.write(f"{ready} of {AgentConfiguration.objects.count()} agents can take calls; "
                          "a voice battle needs two.")

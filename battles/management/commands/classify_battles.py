"""Classify the battles that have no categories yet (battles from before categories, or
whose classification never ran), as the worker does after a battle's vote."""

from django.core.management.base import BaseCommand

from battles.categories import CLASSIFY_BATCH, battles_classify
from battles.models import Battle


class Command(BaseCommand):
    help = ("Classify every battle not classified yet: the rules, then the classifier model "
            "(ARENA_CLASSIFIER_MODEL) where it is available.")

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=None,
                            help="classify at most this many (oldest first)")

    def handle(self, *args, limit, **options):
        ids = Battle.objects.filter(classified_at__isnull=True).order_by("created_at")
        ids = list(ids.values_list("pk", flat=True)[:limit] if limit else ids.values_list(
            "pk", flat=True))
        methods: dict[str, int] = {}
        for start in range(0, len(ids), CLASSIFY_BATCH):
            for result in battles_classify(ids[start:start + CLASSIFY_BATCH]).values():
                methods[result.method] = methods.get(result.method, 0) + 1
        summary = ", ".join(f"{n} by {m}" for m, n in sorted(methods.items())) or "none"
        self.stdout.write(f"classified {sum(methods.values())} of {len(ids)} battles ({summary})")

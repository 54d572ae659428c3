"""Token usage per kind of debate (seed 004), by category or by rounds.

    python manage.py debate_usage [--by category|rounds] [--json]
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from arena.errors import RuleError
from debates.usage import USAGE_MIN_DEBATES, debate_usage


class Command(BaseCommand):
    help = "Token usage per kind of debate: by the motion's category or by rounds."

    def add_arguments(self, parser):
        parser.add_argument("--by", default="category", help="category or rounds.")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, by="category", as_json=False, **options):
        try:
            rows = debate_usage(by=by)
        except RuleError as exc:
            raise CommandError(exc.message) from None
        if as_json:
            self.stdout.write(json.dumps([
                {"key": r.key, "debates": r.debates, "tokens": r.tokens,
                 "debater_tokens": r.debater_tokens, "judging_tokens": r.judging_tokens}
                for r in rows]))
            return
        self.stdout.write(f"{'by ' + by:<28} {'debates':>8} {'tokens/debate':>14} "
                          f"{'speeches':>10} {'checks+judge':>13}")
        for r in rows:
            if r.withheld:
                self.stdout.write(f"{r.label[:28]:<28} {r.debates:>8}   withheld (kinds under "
                                  f"{USAGE_MIN_DEBATES} debates)")
                continue
            self.stdout.write(f"{r.label[:28]:<28} {r.debates:>8} {r.tokens_per_debate:>14,.0f} "
                              f"{r.debater_tokens:>10,} {r.judging_tokens:>13,}")

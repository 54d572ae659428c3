"""Calibrate the judge and the fact-checker on debates with a known quality gap.

    python manage.py debate_calibrate --debates 6 [--models a b] [--rounds 1]

One side argues its best, the other is handicapped (off topic, fallacious or stating a
planted false claim); the report gives the judge's agreement with the expected winner, its
position consistency and the fact-checker's catch rate of the planted claims. The debates run
on the Celery workers (one is started for the command if none answers).
"""

from __future__ import annotations

import json
from contextlib import nullcontext

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console

from arena.errors import RuleError
from arena.webserver import command_worker
from debates.calibration import calibration_report, calibration_start, calibration_wait


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


class Command(BaseCommand):
    help = "Run calibration debates and report judge agreement and fact-check catch rate."

    def add_arguments(self, parser):
        parser.add_argument("--debates", type=int, default=6, help="How many (default 6).")
        parser.add_argument("--models", nargs=2, metavar="ID", help="The two debaters.")
        parser.add_argument("--rounds", type=int, default=1)
        parser.add_argument("--word-limit", type=int, default=80)
        parser.add_argument("--timeout", type=float, default=3600.0,
                            help="Seconds to wait for the debates (default 3600).")
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument("--worker", choices=("auto", "external", "start"), default="auto")

    def handle(self, *args, debates=6, models=None, rounds=1, word_limit=80, timeout=3600.0,
               as_json=False, worker="auto", **options):
        if debates < 1:
            raise CommandError("--debates must be at least 1.")
        console = Console(file=self.stderr if as_json else self.stdout, highlight=False)
        with command_worker(console.print, "debate-calibrate", always=worker == "start") \
                if worker != "external" else nullcontext():
            try:
                started = calibration_start(count=debates, models=models, rounds=rounds,
                                            word_limit=word_limit)
            except RuleError as exc:
                raise CommandError(exc.message) from None
            ids = [d.pk for d in started]
            console.print(f"Started {len(ids)} calibration debates (unlisted, on no board).")
            running = calibration_wait(debate_ids=ids, timeout=timeout)
            if running:
                console.print(f"[yellow]{running} debates still running after {timeout:g} s; "
                              "reporting on the finished ones.[/yellow]")
        report = calibration_report(ids)
        if as_json:
            self.stdout.write(json.dumps({**report.__dict__, "agreement": report.agreement,
                                          "consistency": report.consistency,
                                          "catch_rate": report.catch_rate}))
            return
        console.print(f"Debates finished: {report.finished}/{report.debates}; judged: "
                      f"{report.judged}")
        console.print(f"Judge agreement with the expected winner: {_pct(report.agreement)} "
                      f"({report.agreed}/{report.judged})")
        for handicap, (judged, agreed) in sorted(report.by_handicap.items()):
            console.print(f"  {handicap}: {agreed}/{judged}")
        console.print(f"Position consistency (same winner in both orders): "
                      f"{_pct(report.consistency)} ({report.consistent_pairs}/{report.pairs})")
        console.print(f"Planted false claims: {report.planted}; stated in a speech: "
                      f"{report.planted_spoken}; caught (false or misleading): {report.caught}"
                      f" = {_pct(report.catch_rate)}")

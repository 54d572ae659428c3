"""Calibrate the crowd (seed 004): debates with a known quality gap, the crowd's votes on
them, and how often it picked the stronger side against the seed's 70 %.

    python manage.py crowd_calibrate [--debates 50] [--models a b] [--rounds 1]
                                     [--collect SECONDS] [--window-days 14]
                                     [--min-votes 50] [--json]
    python manage.py crowd_calibrate --report [--window-days 14] [--min-votes 50]

Starting debates (one side argues its best, the other is handicapped, as in
``debate_calibrate``) runs them on the Celery workers (one is started for the command if
none answers) and waits for them; they are listed for the crowd and count on no board.
``--collect`` then waits that long for votes. The report reads the counted votes on every
crowd calibration debate started in the last ``--window-days``: the share that picked the
stronger side with its 95 % interval, and whether it passes; with too few votes, how many
more it needs. Run it again with ``--report`` once the crowd has voted.
"""

from __future__ import annotations

import json
import time
from contextlib import nullcontext
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from rich.console import Console

from arena.errors import RuleError
from arena.webserver import command_worker
from debates.calibration import calibration_wait
from debates.crowd_calibration import (
    DEFAULT_MIN_VOTES,
    crowd_calibration_report,
    crowd_calibration_start,
)

NO_DEBATES = "--debates must be at least 1 (or use --report)."
BAD_WINDOW = "--min-votes and --window-days must be positive, --collect 0 or more."


class Command(BaseCommand):
    help = ("Run debates with a known quality gap for the crowd and report how often its votes "
            "picked the stronger side (seed 004: more than 70%).")

    def add_arguments(self, parser):
        parser.add_argument("--debates", type=int, default=50,
                            help="Debates to start (default 50, as seed 004 says).")
        parser.add_argument("--report", action="store_true",
                            help="Start nothing: report on the votes so far.")
        parser.add_argument("--models", nargs=2, metavar="ID", help="The two debaters.")
        parser.add_argument("--rounds", type=int, default=1)
        parser.add_argument("--word-limit", type=int, default=80)
        parser.add_argument("--timeout", type=float, default=3600.0,
                            help="Seconds to wait for the debates to end (default 3600).")
        parser.add_argument("--collect", type=float, default=0.0,
                            help="Seconds to wait for votes before the report (default 0).")
        parser.add_argument("--window-days", type=float, default=14.0,
                            help="Report on calibration debates started this many days back "
                                 "(default 14).")
        parser.add_argument("--min-votes", type=int, default=DEFAULT_MIN_VOTES,
                            help=f"Votes needed for a verdict (default {DEFAULT_MIN_VOTES}).")
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument("--worker", choices=("auto", "external", "start"), default="auto")

    def handle(self, *args, **o):
        if o["debates"] < 1 and not o["report"]:
            raise CommandError(NO_DEBATES)
        if o["min_votes"] < 1 or o["window_days"] <= 0 or o["collect"] < 0:
            raise CommandError(BAD_WINDOW)
        console = Console(file=self.stderr if o["as_json"] else self.stdout, highlight=False)
        since = timezone.now() - timedelta(days=o["window_days"])
        if not o["report"]:
            self._run(console, o)
        report = crowd_calibration_report(since=since, min_votes=o["min_votes"])
        if o["as_json"]:
            self.stdout.write(json.dumps(report.as_json()))
            return
        lower, upper = report.interval
        rate = "n/a" if report.rate is None else f"{report.rate:.0%}"
        console.print(f"Crowd calibration debates in the last {o['window_days']:g} days: "
                      f"{report.debates}; with counted votes: {report.voted}")
        console.print(f"Votes for the stronger side: {report.hits}/{report.votes} = {rate} "
                      f"(95% CI {lower:.0%}-{upper:.0%}; target > {report.target:.0%})")
        for handicap, (votes, hits) in sorted(report.by_handicap.items()):
            console.print(f"  {handicap}: {hits}/{votes}")
        console.print(report.message)

    def _run(self, console: Console, o: dict) -> None:
        worker = o["worker"]
        with command_worker(console.print, "crowd-calibrate", always=worker == "start") \
                if worker != "external" else nullcontext():
            try:
                started = crowd_calibration_start(count=o["debates"], models=o["models"],
                                                  rounds=o["rounds"],
                                                  word_limit=o["word_limit"])
            except RuleError as exc:
                raise CommandError(exc.message) from None
            ids = [d.pk for d in started]
            console.print(f"Started {len(ids)} debates with a known quality gap, listed for "
                          "the crowd (on no board).")
            running = calibration_wait(debate_ids=ids, timeout=o["timeout"])
            if running:
                console.print(f"[yellow]{running} debates still running after "
                              f"{o['timeout']:g} s.[/yellow]")
        if o["collect"]:
            console.print(f"Collecting the crowd's votes for {o['collect']:g} s.")
            time.sleep(o["collect"])

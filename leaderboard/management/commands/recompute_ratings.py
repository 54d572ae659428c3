"""Rate every board (or one) now and write fresh snapshots, with a progress bar."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from leaderboard.boards import UnknownBoard, board_names
from leaderboard.models import RunStatus, RunTrigger
from leaderboard.runs.online_elo import online_elo_replay
from leaderboard.runs.services import RunInProgress, ratings_run

STEPS = ("aggregate", "online elo", "fit", "tally", "write")


class Command(BaseCommand):
    help = "Recompute the ratings of every board (or --board NAME) and write snapshots."

    def add_arguments(self, parser):
        parser.add_argument("--board", help="Only this board (default: all).")
        parser.add_argument("--bootstrap", type=int, metavar="N",
                            help="Bootstrap intervals with N rounds (default: the setting "
                                 "ARENA_LEADERBOARD_CI, sandwich unless changed).")
        parser.add_argument("--replay-elo", action="store_true",
                            help="Rebuild the online Elo from the outcomes in order first.")

    def handle(self, *args, board=None, bootstrap=None, replay_elo=False, **options):
        if bootstrap is not None and bootstrap < 1:
            raise CommandError("--bootstrap must be at least 1")
        names = [board] if board else board_names()
        if not names:
            raise CommandError("No boards are registered.")
        console = Console(file=self.stdout, highlight=False, width=100)
        columns = (TextColumn("{task.description:<28}"), BarColumn(),
                   TextColumn("{task.fields[step]:<12}"), TimeElapsedColumn())
        try:
            with Progress(*columns, console=console, transient=False) as progress:
                task = progress.add_task("rating " + ", ".join(names),
                                         total=len(STEPS) * len(names), step="")
                if replay_elo:
                    for name in names:
                        online_elo_replay(board_name=name)

                def step(label: str) -> None:
                    progress.update(task, advance=1, step=label)

                run = ratings_run(trigger=RunTrigger.COMMAND, boards=names,
                                  bootstrap_rounds=bootstrap, progress=step, lock_wait=60)
        except UnknownBoard as exc:
            raise CommandError(exc.args[0]) from None
        except RunInProgress as exc:
            raise CommandError(exc.message) from None
        if run.status != RunStatus.SUCCEEDED:
            raise CommandError(f"The rating run failed: {run.error}")
        for snap in run.snapshots.order_by("board", "category"):
            name = f"{snap.board} ({snap.category})" if snap.category else snap.board
            self.stdout.write(
                f"{name}: {snap.outcomes} outcomes, {snap.models_rated} rated of "
                f"{snap.models_total} models, {snap.method}/{snap.ci_method}, fit {snap.fit_ms} ms"
            )
        self.stdout.write(self.style.SUCCESS(
            f"Run {run.pk} done in {run.duration_ms} ms ({run.outcomes_processed} outcomes)."))

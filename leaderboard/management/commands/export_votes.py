"""Write a board's counted outcomes as CSV or JSON lines, in the format ``rate`` reads."""

from __future__ import annotations

import csv
import gzip
import json
from datetime import datetime
from pathlib import Path
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError

from leaderboard.boards import UnknownBoard, get_board

FIRST = ("model_a", "model_b", "winner")


def _plain(value):
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    return value


class Command(BaseCommand):
    help = ("Export a board's counted votes (model_a, model_b, winner, ids, timestamps, "
            "is_demo) as CSV or JSON lines; a .gz output is gzipped.")

    def add_arguments(self, parser):
        parser.add_argument("--board", default="text")
        parser.add_argument("--format", choices=["csv", "jsonl"], default="csv")
        parser.add_argument("--output", "-o", metavar="FILE", help="Default: standard output.")

    def handle(self, *args, board, format, output=None, **options):  # noqa: A002
        try:
            source = get_board(board)
        except UnknownBoard as exc:
            raise CommandError(exc.args[0]) from None
        if source.export_rows is None:
            raise CommandError(f"The {board} board does not export its outcomes.")
        if not output:
            self._write(source.export_rows(), self.stdout, format)
            return
        path = Path(output)
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "wt", encoding="utf-8", newline="") as stream:
            count = self._write(source.export_rows(), stream, format)
        self.stderr.write(f"{count} votes written to {output}")

    def _write(self, rows, stream, fmt: str) -> int:
        count = 0
        writer = None
        for row in rows:
            row = {key: _plain(value) for key, value in row.items()}
            if fmt == "jsonl":
                ordered = {k: row[k] for k in FIRST} | row
                stream.write(json.dumps(ordered) + "\n")
            else:
                if writer is None:
                    fields = [*FIRST, *(k for k in row if k not in FIRST)]
                    writer = csv.DictWriter(stream, fieldnames=fields, lineterminator="\n")
                    writer.writeheader()
                writer.writerow(row)
            count += 1
        if fmt == "csv" and writer is None:  # no votes: still a valid file with a header
            csv.writer(stream, lineterminator="\n").writerow(FIRST)
        return count


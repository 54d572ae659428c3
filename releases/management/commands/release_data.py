"""Write the open data release of a date (default today, UTC): every mode's counted votes as
Parquet and CSV with a datasheet and SHA-256 checksums; a complete day already released is left
as it is, a partial one (cut before its day ended) is written again."""

from __future__ import annotations

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from arena.errors import RuleError
from releases.selectors import release_dir
from releases.services import release_build

BAD_DATE = "--date must be a date like 2026-11-26, not {value!r}."


class Command(BaseCommand):
    help = ("Write a dated release of the public, voted contests of every mode (Parquet, CSV, "
            "datasheet, SHA256SUMS) under ARENA_RELEASES_DIR; a complete day is written once, "
            "today's (partial) release again at each call.")

    def add_arguments(self, parser):
        parser.add_argument("--date", metavar="YYYY-MM-DD",
                            help="The release's date (default: today, UTC); its votes are "
                                 "those cast before the end of that day.")

    def handle(self, *args, date=None, **options):  # noqa: A002 - the option's name
        try:
            day = None if date is None else _parse(date)
            release, made = release_build(day=day)
        except RuleError as exc:
            raise CommandError(exc.message) from None
        verb = "written to" if made else "already released, in"
        self.stdout.write(f"Release {release.date}: {release.votes} votes, {verb} "
                          f"{release_dir(release.date)}")
        for f in release.files:
            self.stdout.write(f"  {f['name']}  {f['size']} bytes  sha256 {f['sha256']}")


def _parse(value: str):
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(BAD_DATE.format(value=value)) from None

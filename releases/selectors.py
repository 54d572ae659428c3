"""Reading releases: the list the page and the API show, one release's file on disk, and the
release that covers a rating run's votes (the leaderboard links to it)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from django.conf import settings

from releases.models import Release
from releases.sources import released_board


def release_dir(day: date) -> Path:
    """Where the files of the release of ``day`` are."""
    return Path(settings.ARENA_RELEASES_DIR) / day.isoformat()


def release_list() -> list[Release]:
    return list(Release.objects.all())


def release_file(*, day: date, name: str) -> tuple[Release, dict, Path] | None:
    """A release's file (its record and path), or None when there is no such release, file,
    or the file is gone from the disk."""
    release = Release.objects.filter(date=day).first()
    described = release.file(name) if release else None
    if described is None:
        return None
    path = release_dir(day) / described["name"]
    return (release, described, path) if path.is_file() else None


def release_covering(*, board: str, moment: datetime) -> Release | None:
    """The earliest release cut at or after ``moment`` (a rating run's start) holding ``board``'s
    votes (else None): it holds every vote the run read (``rate --until`` picks them out of it,
    where the release reproduces the board). The earliest, so the link stays on the one
    release of the run's own day rather than moving to each newer one."""
    if not released_board(board):
        return None
    return Release.objects.filter(period_end__gte=moment).order_by("date").first()


def file_url(release: Release, name: str) -> str:
    return f"/data/{release.date.isoformat()}/{name}"

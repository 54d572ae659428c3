"""A dated release of the public, voted contests: what it covers, what it counts and the
files it wrote (under ``ARENA_RELEASES_DIR/<date>/``), each with its size and SHA-256."""

from __future__ import annotations

from django.db import models

from arena.models import CreatedAtModel


class Release(CreatedAtModel):
    date = models.DateField(unique=True)
    # The votes it holds were cast in [period_start, period_end); period_start is the oldest
    # vote's time (None for a release with no votes), period_end the moment it was cut.
    period_start = models.DateTimeField(null=True, blank=True)
    period_end = models.DateTimeField(db_index=True)
    votes = models.PositiveIntegerField(default=0)
    # {"boards": {board: votes}, "modes": {mode: votes}, "with_text": n,
    #  "removed": {board: {reason: n}}, "redacted": {"email": n, "phone": n, "key": n}}
    counts = models.JSONField(default=dict)
    # [{"name", "format", "content_type", "size", "sha256"}], in the order the page lists them
    files = models.JSONField(default=list)
    datasheet = models.TextField()

    class Meta:
        ordering = ["-date"]

    def __str__(self) -> str:
        return f"release {self.date}"

    def file(self, name: str) -> dict | None:
        return next((f for f in self.files if f["name"] == name), None)

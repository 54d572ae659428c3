"""``GET /api/data/releases``: every open data release, newest first, with its files (sizes,
SHA-256 checksums, download URLs) and its datasheet. Thin: a selector, shaped."""

from __future__ import annotations

from datetime import date, datetime

from django.http import HttpRequest
from ninja import Field, Router, Schema

from releases import selectors

router = Router(tags=["data"])


class ReleaseFileOut(Schema):
    name: str
    format: str = Field(description="parquet, csv, md (the datasheet) or sha256 (checksums).")
    content_type: str
    size: int = Field(description="Bytes.")
    sha256: str
    url: str


class ReleaseOut(Schema):
    date: date
    period_start: datetime | None = Field(description="The oldest vote's time; null if none.")
    period_end: datetime = Field(description="When the release was cut.")
    votes: int
    counts: dict = Field(description="Votes by board and by mode, with_text, the votes left "
                                     "out by board and reason, and the redactions by kind.")
    files: list[ReleaseFileOut]
    datasheet: str = Field(description="Markdown.")
    datasheet_url: str


class ReleaseListOut(Schema):
    releases: list[ReleaseOut]


@router.get("/data/releases", response=ReleaseListOut)
def list_releases(request: HttpRequest):
    """Every release of public, voted contests (votes of every mode), newest first."""
    return {"releases": [
        {"date": r.date, "period_start": r.period_start, "period_end": r.period_end,
         "votes": r.votes, "counts": r.counts, "datasheet": r.datasheet,
         "datasheet_url": selectors.file_url(r, "datasheet.md"),
         "files": [f | {"url": selectors.file_url(r, f["name"])} for f in r.files]}
        for r in selectors.release_list()]}

"""Writing a release: ``release_build(date=...)`` gathers every source's counted outcomes cut
at the end of that day (or now, for today), redacts the conversations voters let be published,
writes Parquet, CSV, the datasheet and a SHA-256 checksum file under
``ARENA_RELEASES_DIR/<date>/`` and records the release. One release per date: building a
complete day again returns the release already made, its files untouched; a release cut
before its day ended (made during the day) is partial, and building it again replaces it, so
the nightly job writes the whole day even when someone released it by hand earlier.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import shutil
import uuid
from collections import Counter
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from django.db import IntegrityError, transaction
from django.utils import timezone

from arena.errors import RuleError
from releases.datasheet import datasheet_text
from releases.identifiers import contest_key, vote_key
from releases.models import Release
from releases.redaction import Redactor
from releases.schema import CATEGORIES, COLUMNS, SCHEMA, TIMESTAMP_FORMAT
from releases.selectors import release_dir
from releases.sources import Source, sources

logger = logging.getLogger(__name__)

FUTURE_DATE = "A release cannot be dated after today ({today})."
PARQUET, CSV, DATASHEET, CHECKSUMS = "votes.parquet", "votes.csv", "datasheet.md", "SHA256SUMS"
CONTENT_TYPES = {
    PARQUET: "application/vnd.apache.parquet",
    CSV: "text/csv; charset=utf-8",
    DATASHEET: "text/markdown; charset=utf-8",
    CHECKSUMS: "text/plain; charset=utf-8",
}


def release_build(*, day: date | None = None) -> tuple[Release, bool]:
    """The release of ``day`` (default today, UTC) and whether it was made now; a complete
    day already released is returned as it is, a partial one is made again."""
    now = timezone.now()
    today = now.astimezone(UTC).date()
    day = day or today
    if day > today:
        raise RuleError(FUTURE_DATE.format(today=today), status=422)
    end_of_day = datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC)
    existing = Release.objects.filter(date=day).first()
    if existing is not None and existing.period_end >= end_of_day:
        return existing, False
    until = min(now, end_of_day)
    folder = release_dir(day)
    # Written aside (a folder of this build's own), then moved into place with the record.
    staging = folder.with_name(f".{folder.name}.{uuid.uuid4().hex}.partial")
    staging.mkdir(parents=True)
    try:
        table, counts, first = _gather(until)
        pq.write_table(table, staging / PARQUET)
        _write_csv(table, staging / CSV)
        sheet = datasheet_text(day=day, start=first, end=until, counts=counts,
                               sources=sources())
        (staging / DATASHEET).write_text(sheet, encoding="utf-8")
        files = [_describe(staging / name, name) for name in (PARQUET, CSV, DATASHEET)]
        (staging / CHECKSUMS).write_text(
            "".join(f"{f['sha256']}  {f['name']}\n" for f in files), encoding="utf-8")
        files.append(_describe(staging / CHECKSUMS, CHECKSUMS))
        fields = {"period_start": first, "period_end": until, "votes": table.num_rows,
                  "counts": counts, "files": files, "datasheet": sheet}
        with transaction.atomic():
            if existing is None:
                release = Release.objects.create(date=day, **fields)
            else:  # a partial day: replaced, unless a fuller cut was made meanwhile
                release = Release.objects.select_for_update().get(pk=existing.pk)
                if release.period_end >= until:
                    shutil.rmtree(staging, ignore_errors=True)
                    return release, False
                for name, value in fields.items():
                    setattr(release, name, value)
                release.save(update_fields=list(fields))
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
    except IntegrityError:  # built at the same moment by another process: theirs stands
        shutil.rmtree(staging, ignore_errors=True)
        return Release.objects.get(date=day), False
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    logger.info("release %s: %d votes in %s", day, release.votes, folder)
    return release, True


def _gather(until: datetime) -> tuple[pa.Table, dict, datetime | None]:
    redactor = Redactor()
    columns: dict[str, list] = {name: [] for name in COLUMNS}
    boards, modes, removed = Counter(), Counter(), {}
    with_text = 0
    first = None
    for source in sources():
        removed[source.board] = dict(source.removed(until))
        for row in source.rows(until):
            record = _record(row, source, redactor)
            with_text += bool(record["conversation_a"] or record["conversation_b"])
            for name in COLUMNS:
                columns[name].append(record[name])
            boards[source.board] += 1
            modes[source.mode] += 1
            first = row["created_at"] if first is None else min(first, row["created_at"])
    counts = {"boards": dict(boards), "modes": dict(modes), "with_text": with_text,
              "removed": removed, "redacted": {kind: redactor.removed[kind]
                                               for kind in ("email", "phone", "key")}}
    return pa.table(columns, schema=SCHEMA), counts, first


def _record(row, source: Source, redactor: Redactor) -> dict:
    when = row["created_at"].astimezone(UTC)
    published = bool(row.get("publish_text"))
    record = dict.fromkeys(COLUMNS)
    record.update({key: row[key] for key in COLUMNS if key in row})
    record.update(
        id=vote_key(source.mode, row["id"]), contest_id=contest_key(source.mode, row["contest_id"]),
        mode=source.mode,
        board=source.board, voter=source.voter, judge=row.get("judge") or "",
        timestamp=when.strftime(TIMESTAMP_FORMAT), date=when.date().isoformat(),
        language=row.get("language") or "", publish_text=published,
        conversation_a=_conversation(row.get("conversation_a"), published, redactor),
        conversation_b=_conversation(row.get("conversation_b"), published, redactor))
    categories = set(row.get("categories") or ())
    record.update({name: name in categories for name in CATEGORIES},
                  synthetic=bool(row.get("synthetic")))
    return record


def _conversation(messages, published: bool, redactor: Redactor) -> str:
    if not published or not messages:
        return ""
    return json.dumps([{"role": m["role"], "content": redactor.redact(m["content"])}
                       for m in messages], ensure_ascii=False)


def _write_csv(table: pa.Table, path: Path) -> None:
    """The same rows as the Parquet file, as text: booleans as ``true``/``false`` (what ``rate
    --category`` reads), missing numbers as empty fields."""
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(table.column_names)
        for batch in table.to_batches(max_chunksize=10_000):
            for row in batch.to_pylist():
                writer.writerow(["" if v is None else str(v).lower() if isinstance(v, bool)
                                 else v for v in row.values()])


def _describe(path: Path, name: str) -> dict:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return {"name": name, "format": name.rsplit(".", 1)[-1] if "." in name else "sha256",
            "content_type": CONTENT_TYPES[name], "size": path.stat().st_size,
            "sha256": digest.hexdigest()}

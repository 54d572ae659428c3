"""The local evidence store: full-text search over :class:`~debates.models.Evidence`.

PostgreSQL's own full-text search (``websearch_to_tsquery`` over a GIN-indexed
``to_tsvector('english', title || content)``, ranked by ``ts_rank``) on PostgreSQL; SQLite's
FTS5 (a contentless-sync virtual table kept by triggers, ranked by ``bm25``) on the embedded
default. Both are created by migration ``debates/0002``. A claim is searched as any of its
significant words, so evidence that shares most of them ranks first.
"""

from __future__ import annotations

import re

from asgiref.sync import sync_to_async
from django.db import connection

from debates.evidence import Evidence, SearchError

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]{2,}")
STOPWORDS = frozenset({
    "the", "and", "for", "that", "this", "with", "from", "are", "was", "were", "has", "have",
    "had", "not", "but", "its", "it's", "than", "then", "they", "them", "their", "there",
    "which", "who", "whom", "what", "when", "where", "why", "how", "all", "any", "can", "could",
    "would", "should", "will", "more", "most", "less", "such", "into", "over", "only", "also",
    "very", "much", "many", "per",
})

FTS_TABLE = "debates_evidence_fts"

SQLITE_SETUP = [
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    "title, content, content='debates_evidence', content_rowid='id', "
    "tokenize='porter unicode61')",
    f"CREATE TRIGGER IF NOT EXISTS debates_evidence_ai AFTER INSERT ON debates_evidence BEGIN "
    f"INSERT INTO {FTS_TABLE}(rowid, title, content) VALUES (new.id, new.title, new.content); "
    "END",
    f"CREATE TRIGGER IF NOT EXISTS debates_evidence_ad AFTER DELETE ON debates_evidence BEGIN "
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title, content) "
    "VALUES ('delete', old.id, old.title, old.content); END",
    f"CREATE TRIGGER IF NOT EXISTS debates_evidence_au AFTER UPDATE ON debates_evidence BEGIN "
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title, content) "
    "VALUES ('delete', old.id, old.title, old.content); "
    f"INSERT INTO {FTS_TABLE}(rowid, title, content) VALUES (new.id, new.title, new.content); "
    "END",
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')",
]
SQLITE_TEARDOWN = [
    "DROP TRIGGER IF EXISTS debates_evidence_ai", "DROP TRIGGER IF EXISTS debates_evidence_ad",
    "DROP TRIGGER IF EXISTS debates_evidence_au", f"DROP TABLE IF EXISTS {FTS_TABLE}",
]
PG_VECTOR = ("to_tsvector('english', coalesce(title, '') || ' ' || coalesce(content, ''))")
PG_SETUP = [f"CREATE INDEX IF NOT EXISTS debates_evidence_fts ON debates_evidence "
            f"USING gin (({PG_VECTOR}))"]
PG_TEARDOWN = ["DROP INDEX IF EXISTS debates_evidence_fts"]


def search_terms(text: str, limit: int = 16) -> list[str]:
    """The claim's significant words, lower-case, first occurrence order."""
    seen: list[str] = []
    for word in _WORD.findall(text.lower()):
        word = word.strip("'-")
        if len(word) > 2 and word not in STOPWORDS and word not in seen:
            seen.append(word)
    return seen[:limit]


def _rows(query: str, max_results: int) -> list[tuple]:
    terms = search_terms(query)
    if not terms:
        return []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"SELECT title, url, content, ts_rank({PG_VECTOR}, q) AS rank "
                f"FROM debates_evidence, websearch_to_tsquery('english', %s) q "
                f"WHERE {PG_VECTOR} @@ q ORDER BY rank DESC, id LIMIT %s",
                [" or ".join(terms), max_results])
        else:
            match = " OR ".join(f'"{t}"' for t in terms)
            cursor.execute(
                f"SELECT e.title, e.url, e.content, -bm25({FTS_TABLE}) AS rank "
                f"FROM {FTS_TABLE} JOIN debates_evidence e ON e.id = {FTS_TABLE}.rowid "
                f"WHERE {FTS_TABLE} MATCH %s ORDER BY bm25({FTS_TABLE}) LIMIT %s",
                [match, max_results])
        return cursor.fetchall()


def search_evidence(query: str, *, max_results: int = 3) -> list[Evidence]:
    try:
        rows = _rows(query, max_results)
    except Exception as exc:  # a database error must not stop the debate
        raise SearchError("The evidence store could not be searched.") from exc
    finally:
        if connection.vendor != "sqlite":
            connection.close()  # called from the I/O loop's threads: hold no connection
    return [Evidence(title, url or "", content, float(rank or 0.0))
            for title, url, content, rank in rows]


class LocalEvidenceSearch:
    name = "local"

    async def search(self, query: str, *, max_results: int = 3) -> list[Evidence]:
        return await sync_to_async(search_evidence, thread_sensitive=False)(
            query, max_results=max_results)

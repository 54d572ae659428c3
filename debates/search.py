"""Search backends of the fact-checker: where a claim's evidence comes from.

Two backends share one interface (:class:`SearchBackend`): the local evidence store (the
default, full-text search over the evidence documents in the database) and Tavily (a web
search API, used when ``ARENA_FACTCHECK_SEARCH=tavily`` and ``TAVILY_API_KEY`` is set).
A backend returns :class:`Evidence` items, best first, or raises :class:`SearchError` with a
message safe to show a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Evidence:
    title: str
    url: str
    content: str
    score: float = 0.0

    def as_dict(self) -> dict:
        return {"title": self.title, "url": self.url, "content": self.content,
                "score": round(self.score, 4)}


class SearchError(Exception):
    """The search could not be done; ``str(exc)`` is safe to show (no key, no raw body)."""


class SearchBackend(Protocol):
    name: str

    async def search(self, query: str, *, max_results: int = 3) -> list[Evidence]: ...


def search_backend() -> SearchBackend:
    """The configured backend: Tavily when ``ARENA_FACTCHECK_SEARCH`` is ``tavily`` and
    ``TAVILY_API_KEY`` is set, else the local evidence store."""
    from django.conf import settings

    if settings.ARENA_FACTCHECK_SEARCH == "tavily":
        from debates.search_tavily import tavily_from_settings

        tavily = tavily_from_settings()
        if tavily is not None:
            return tavily
    from debates.evidence_store import LocalEvidenceSearch

    return LocalEvidenceSearch()

"""Search backends of the fact-checker: where a claim's evidence comes from.

Two backends share one interface (:class:`~debates.evidence.SearchBackend`): the local
evidence store (the default, full-text search over the evidence documents in the database)
and Tavily (a web search API, used when ``ARENA_FACTCHECK_SEARCH=tavily`` and
``TAVILY_API_KEY`` is set). A backend returns :class:`~debates.evidence.Evidence` items, best
first, or raises :class:`~debates.evidence.SearchError` with a message safe to show a person.
"""

from __future__ import annotations

from django.conf import settings

from debates.evidence import SearchBackend
from debates.evidence_store import LocalEvidenceSearch
from debates.search_tavily import tavily_from_settings


def search_backend() -> SearchBackend:
    """The configured backend: Tavily when ``ARENA_FACTCHECK_SEARCH`` is ``tavily`` and
    ``TAVILY_API_KEY`` is set, else the local evidence store."""
    if settings.ARENA_FACTCHECK_SEARCH == "tavily":
        tavily = tavily_from_settings()
        if tavily is not None:
            return tavily
    return LocalEvidenceSearch()

"""Tavily as a fact-checking search backend, built to its documented API.

``POST {TAVILY_BASE_URL}/search`` with ``Authorization: Bearer tvly-…`` and a JSON body
(``query``, ``search_depth``, ``max_results``, ``include_answer``…); a 200 answers
``{"query", "results": [{"title", "url", "content", "score", "raw_content"}], "answer"?,
"response_time"}``. Errors carry ``{"detail": {"error": "…"}}``: 400 a bad request, 401 a bad
key, 429 the rate limit, 403 / 432 / 433 forbidden, plan or pay-as-you-go limit exceeded
(how tavily-python's ``AsyncTavilyClient`` reads them), anything else a server failure.
Every failure becomes a :class:`~debates.evidence.SearchError` whose message a person may read:
never the key, never the raw body.
"""

from __future__ import annotations

import asyncio
import os
import weakref

import httpx
from django.conf import settings

from debates.evidence import Evidence, SearchError

STATUS_MESSAGES = {
    400: "Tavily refused the search as malformed (400)",
    401: "Tavily refused the API key (401); check TAVILY_API_KEY",
    403: "Tavily refused the search (403)",
    429: "Tavily's rate limit was hit (429); claims are checked again on the next turn",
    432: "Tavily's plan limit is used up (432)",
    433: "Tavily's pay-as-you-go limit is reached (433)",
}
NOT_RESULTS = "Tavily sent a reply that is not a search result."
# One client (its connection pool and TLS context) per event loop: building a client per
# search costs more CPU than the search's own work.
_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=100, max_keepalive_connections=20))
    return client


class TavilySearch:
    name = "tavily"

    def __init__(self, *, api_key: str, base_url: str = "https://api.tavily.com",
                 timeout: float = 10.0) -> None:
        self._api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def __repr__(self) -> str:  # never the key
        return f"TavilySearch(base_url={self.base_url!r})"

    async def search(self, query: str, *, max_results: int = 3) -> list[Evidence]:
        body = {"query": query, "search_depth": "basic", "max_results": max_results,
                "include_answer": False, "include_raw_content": False}
        headers = {"Authorization": f"Bearer {self._api_key}",
                   "Content-Type": "application/json"}
        try:
            response = await _client().post(f"{self.base_url}/search", json=body,
                                             headers=headers, timeout=self.timeout)
        except httpx.TimeoutException:
            raise SearchError(f"Tavily did not answer within {self.timeout:g} s.") from None
        except httpx.HTTPError as exc:
            raise SearchError(f"Tavily could not be reached ({type(exc).__name__}).") from None
        if response.status_code != 200:
            message = STATUS_MESSAGES.get(response.status_code,
                                          f"Tavily failed ({response.status_code})")
            raise SearchError(f"{message}.")
        return _results(response)


def _results(response: httpx.Response) -> list[Evidence]:
    try:
        items = response.json()["results"]
        if not isinstance(items, list):
            raise TypeError("results is not a list")
        found = []
        for item in items:
            content = item.get("content") or ""
            if not isinstance(content, str) or not content.strip():
                continue
            found.append(Evidence(title=str(item.get("title") or item["url"]),
                                  url=str(item["url"]), content=content.strip(),
                                  score=float(item.get("score") or 0.0)))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise SearchError(NOT_RESULTS) from None
    return sorted(found, key=lambda e: -e.score)


def tavily_from_settings() -> TavilySearch | None:
    """The configured Tavily backend, or None when ``TAVILY_API_KEY`` is not set."""
    key = os.environ.get("TAVILY_API_KEY", "").strip()
    if not key:
        return None
    return TavilySearch(api_key=key, base_url=settings.TAVILY_BASE_URL,
                        timeout=settings.ARENA_FACTCHECK_CLAIM_SECONDS)

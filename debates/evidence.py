"""What the fact-checker's search backends return: evidence, the failure they raise, and the
interface they share (:mod:`debates.search` picks the configured one)."""

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

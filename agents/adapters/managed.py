"""What the managed providers' adapters (Vapi, Retell) share: the instructions their agents
get, one client for their REST APIs whose failures are said without naming the provider,
and their own latency reports in the arena's terms.

Before the vote the caller must not learn which provider an agent runs on, so every
message meant for the page says "its provider", while the exception's own text (for the
logs and the admin) names it. The API key travels only in the ``Authorization`` header:
it is never part of a message, a URL or a log line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import statistics
from collections.abc import Callable
from typing import Any

import httpx
from django.conf import settings

from agents.adapters.base import AgentUnavailable
from agents.adapters.local import VOICE_RULES, Brief

logger = logging.getLogger(__name__)

LINE_DROPPED = "The line to the agent dropped mid-call; what was said until then is kept."
AGENT_FAILED = "The agent failed on its provider's side; what was said until then is kept."
END_CALL_PHRASES = ["goodbye", "bye for now"]
REPORT_ATTEMPTS = 3
REPORT_WAIT_SECONDS = 1.0


def instructions(brief: Brief) -> str:
    """The system prompt of a managed agent: the scenario's, the rules of a phone call, and
    what its simulated tools answer (the arena serves no tool endpoint a provider could
    call, so an agent is told the lookups' results up front)."""
    parts = [brief.system_prompt, VOICE_RULES]
    if brief.tools:
        lines = [f"- {t.get('name')}: {t.get('description', '')} Result: "
                 f"{json.dumps(t.get('result'))}" for t in brief.tools]
        parts.append("Your lookup tools answer as follows:\n" + "\n".join(lines))
    return "\n\n".join(parts)


def shown_refusal(status: int) -> str:
    if status in (401, 403):
        return f"its provider refused the API key (HTTP {status})"
    if status == 429:
        return "its provider is turning calls away for now (HTTP 429)"
    if status >= 500:
        return f"its provider failed (HTTP {status})"
    return f"its provider rejected the call (HTTP {status})"


class ProviderError(AgentUnavailable):
    def __init__(self, message: str, *, shown: str, status: int | None = None) -> None:
        super().__init__(message, shown=shown)
        self.status = status


class ProviderAPI:
    """A managed provider's REST API, authenticated with its key from the environment."""

    def __init__(self, *, name: str, base_url: str, key_env: str) -> None:
        self.name = name
        self.base_url = base_url
        self._key = os.environ.get(key_env, "")

    @property
    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}"}

    async def call(self, method: str, path: str, body: dict | None = None,
                   *, accept: tuple[int, ...] = ()) -> Any:
        """One request; its JSON (an object; a list too for a GET), or
        :class:`ProviderError` saying what went wrong. Any 2xx is success, and so are the
        statuses in ``accept``."""
        try:
            async with httpx.AsyncClient(base_url=self.base_url, headers=self.auth_headers,
                                         timeout=settings.ARENA_VOICE_PROVIDER_TIMEOUT) as client:
                response = await client.request(method, path, json=body)
        except httpx.TimeoutException as exc:
            raise ProviderError(f"{self.name} did not answer {method} {path} in time",
                                shown="its provider did not answer in time") from exc
        except httpx.HTTPError as exc:
            raise ProviderError(f"{self.name} could not be reached for {method} {path}: "
                                f"{type(exc).__name__}",
                                shown="its provider could not be reached") from exc
        if not (200 <= response.status_code < 300 or response.status_code in accept):
            raise ProviderError(f"{self.name} answered HTTP {response.status_code} to "
                                f"{method} {path}: {response.text[:300]}",
                                shown=shown_refusal(response.status_code),
                                status=response.status_code)
        if response.status_code == 204 or not response.content:
            return {}
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict) and not (method == "GET" and isinstance(data, list)):
            raise ProviderError(f"{self.name} answered {method} {path} with something that "
                                f"is not a JSON object: {response.text[:200]!r}",
                                shown="its provider answered with something unreadable")
        return data

    async def ping(self, path: str) -> str | None:
        """Whether the key is accepted: ``None``, or what went wrong (names the provider:
        for the operator's console)."""
        try:
            await self.call("GET", path)
        except ProviderError as exc:
            return str(exc)
        return None

    async def report(self, path: str, ready: Callable[[dict], bool]) -> dict[str, Any]:
        """A post-call fetch: the call as the provider reports it once ``ready`` says it has
        settled (a provider finishes its report a moment after the call), asked a few times;
        an empty dict (logged) when it could not be fetched."""
        call: dict[str, Any] = {}
        for attempt in range(REPORT_ATTEMPTS):
            if attempt:
                await asyncio.sleep(REPORT_WAIT_SECONDS)
            try:
                call = await self.call("GET", path)
            except ProviderError as exc:
                logger.warning("post-call report not fetched: %s", exc)
                return {}
            if not isinstance(call, dict):
                return {}
            if ready(call):
                break
        return call


def latency_report(provider: str, turn_ms: list[float], **extra: Any) -> dict[str, Any]:
    """A provider's own per-turn latencies, in the keys the reveal shows."""
    turns = [float(ms) for ms in turn_ms if isinstance(ms, int | float)]
    return {"provider": provider,
            "avg_latency_ms": round(statistics.fmean(turns), 1) if turns else None,
            "p50_latency_ms": round(statistics.median(turns), 1) if turns else None,
            "turn_latencies_ms": [round(ms, 1) for ms in turns],
            **extra}

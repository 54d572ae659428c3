"""Pytest fixtures for the fake provider servers.

Register in the root ``conftest.py`` with ``pytest_plugins = ["testkit.fixtures"]``.

Each fixture starts a fresh server per test, puts its API key into the environment variable
named by ``server.api_key_env`` (so ``server.endpoint(...)`` works with the real client), and
stops the server afterwards (hung requests are released at once).

``fast_llm_retries`` shrinks the client's backoff (and read timeout) through pytest-django's
``settings`` fixture, for tests that exercise retries.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testkit.fake_providers import FakeAnthropicServer, FakeOpenAIServer
from testkit.fake_webhook import FakeWebhook


def _serve(server_class, monkeypatch: pytest.MonkeyPatch):
    server = server_class().start()
    if server.api_key is not None:
        monkeypatch.setenv(server.api_key_env, server.api_key)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    yield from _serve(FakeOpenAIServer, monkeypatch)


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    yield from _serve(FakeAnthropicServer, monkeypatch)


@pytest.fixture
def alert_webhook(settings) -> Iterator[FakeWebhook]:  # type: ignore[no-untyped-def]
    """A local webhook receiver the alerts are sent to, and an operator's address for their
    e-mails (pytest-django's ``mailoutbox`` holds those)."""
    with FakeWebhook() as receiver:
        settings.ARENA_ALERT_WEBHOOK_URL = receiver.url
        settings.ARENA_ALERT_EMAILS = ["ops@example.org"]
        yield receiver


@pytest.fixture
def fast_llm_retries(settings):  # type: ignore[no-untyped-def]
    """Backoff base 0.05 s (waits 0.05 s, 0.1 s) and a 2 s read timeout."""
    settings.ARENA_LLM_BACKOFF_BASE = 0.05
    settings.ARENA_LLM_TIMEOUTS = {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}
    return settings


@pytest.fixture(autouse=True)
def fresh_rate_limits() -> Iterator[None]:
    """Every test starts with no request counted (all test clients share one IP): neither
    the arena's nor django-allauth's (30 sign-ins a minute per address, kept in the cache,
    which a run of the accounts' tests passes)."""
    from django.core.cache import cache

    from arena.ratelimit import limits_reset

    limits_reset()
    client = cache._cache.get_client()
    for key in client.scan_iter(match=cache.make_key("allauth:rl:*")):
        client.delete(key)
    yield


@pytest.fixture(autouse=True)
def fresh_model_registry_caches() -> None:
    """Every test reads the models it made: each process keeps the registry's endpoints and
    the prompt limits briefly, cleared when a model is saved, which a test's database flush
    or a queryset update does not do."""
    from arena.selectors import model_endpoints_forget

    model_endpoints_forget()


@pytest.fixture
def staff(db):  # type: ignore[no-untyped-def]
    """A client signed in as a superuser named "root" (what the admin pages record)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-123456")
    client = Client()
    client.force_login(user)
    return client

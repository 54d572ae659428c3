import zlib
from collections.abc import Iterator

import pytest

from arena.models import AIModel, ProviderKind
from testkit.browser import browser_page
from testkit.live import keyless


def neutral_reply(rec) -> str:
    """An answer that names no model but differs per model: a number derived from it."""
    users = [m for m in rec.messages if m.get("role") == "user"]
    last = users[-1]["content"] if users else ""
    voice = zlib.crc32(rec.model.encode()) % 9973
    return f"Answer number {voice} about: {last}. It has a few words in it."


@pytest.fixture
def two_models(fake_openai):
    """Two models served by one fake OpenAI-compatible server (told apart by api_model)."""
    fake_openai.reply_text = neutral_reply
    fake_openai.token_delay = 0.005
    common = {
        "provider": "Fakeprov",
        "provider_kind": ProviderKind.OPENAI,
        "base_url": fake_openai.base_url,
        "api_key_env": fake_openai.api_key_env,
        "license": "Apache-2.0",
        "max_tokens": 64,
    }
    alpha = AIModel.objects.create(slug="alpha-7b", name="Alphamodel 7B", api_model="alpha-api",
                                   organization="Alphacorp", **common)
    beta = AIModel.objects.create(slug="beta-3b", name="Betamodel 3B", api_model="beta-api",
                                  organization="Betalabs", **common)
    return alpha, beta


IDENTIFYING = ["alpha-7b", "Alphamodel", "alpha-api", "Alphacorp", "beta-3b", "Betamodel",
               "beta-api", "Betalabs", "Fakeprov"]


def assert_blind(payload: str, base_url: str) -> None:
    lowered = payload.lower()
    for term in [*IDENTIFYING, base_url]:
        assert term.lower() not in lowered, f"{term!r} leaked before the vote"


# The browser tests' live site and page (battles/tests/test_browser*.py).
@pytest.fixture
def arena(asgi_live_server, celery_worker, two_models, fake_openai) -> str:
    """The live site with two models that stream slowly enough to watch; its base URL."""
    keyless(fake_openai, two_models, token_delay=0.05)
    return asgi_live_server


@pytest.fixture
def page(chromium, arena, monkeypatch) -> Iterator[object]:
    with browser_page(chromium, arena, monkeypatch,
                      viewport={"width": 1280, "height": 900}) as page:
        yield page

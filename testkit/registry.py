"""Registry rows for tests: a model served by one of the fake provider servers."""

from __future__ import annotations

from arena.models import AIModel, ProviderKind


def make_model(server, slug: str, **fields) -> AIModel:  # noqa: ANN001 - a fake server
    """An ``AIModel`` named after ``slug`` ("alpha-7b" → "Alpha Model", organisation
    "Alphacorp") and served by ``server`` (its kind, URL and key variable); ``fields``
    override any column."""
    kind = ProviderKind.ANTHROPIC if server.kind == "anthropic" else ProviderKind.OPENAI
    word = slug.split("-")[0].title()
    values = {
        "name": f"{word} Model", "api_model": f"{slug}-api", "provider": "Fakeprov",
        "provider_kind": kind, "base_url": server.base_url, "api_key_env": server.api_key_env,
        "organization": f"{word}corp", "max_tokens": 200,
    }
    return AIModel.objects.create(slug=slug, **{**values, **fields})

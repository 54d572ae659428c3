"""Reads of the model registry."""

from __future__ import annotations

import time

from arena.availability import Availability, model_base_url, models_availability
from arena.llm.types import ModelEndpoint
from arena.models import AIModel
from arena.queries import one_or_none


def model_list_all() -> list[AIModel]:
    return list(AIModel.objects.order_by("-is_local", "name"))


def model_list_with_availability(*, ping: bool = True) -> list[tuple[AIModel, Availability]]:
    models = model_list_all()
    availability = models_availability(models, ping=ping)
    return [(model, availability[model.slug]) for model in models]


def model_with_availability(slug: str) -> tuple[AIModel, Availability] | None:
    """One model and whether it can battle now; None for an unknown id."""
    model = one_or_none(AIModel.objects.filter(pk=slug))
    if model is None:
        return None
    return model, models_availability([model])[model.slug]


def model_list_available() -> list[AIModel]:
    """The models that can battle now."""
    return [model for model, avail in model_list_with_availability() if avail.available]


# Endpoints by model id, kept briefly in each process: a worker starts hundreds of calls a
# second to the same few models. Saving a model clears it here at once (see ArenaConfig);
# other processes see the change within ENDPOINT_CACHE_SECONDS.
ENDPOINT_CACHE_SECONDS = 10.0
_endpoints: dict[str, tuple[float, ModelEndpoint]] = {}


def model_endpoint_by_slug(slug: str) -> ModelEndpoint:
    now = time.monotonic()
    cached = _endpoints.get(slug)
    if cached is not None and now - cached[0] < ENDPOINT_CACHE_SECONDS:
        return cached[1]
    endpoint = model_endpoint(AIModel.objects.get(pk=slug))
    _endpoints[slug] = (now, endpoint)
    return endpoint


def model_endpoints_forget(**kwargs) -> None:
    _endpoints.clear()


def model_endpoint(model: AIModel) -> ModelEndpoint:
    """What the LLM client layer needs to call this model (never the key itself)."""
    return ModelEndpoint(
        slug=model.slug,
        provider_kind=model.provider_kind,
        api_model=model.api_model,
        base_url=model_base_url(model),
        api_key_env=model.api_key_env or None,
        max_tokens=model.max_tokens,
        system_prompt=model.system_prompt,
        input_price_per_million=float(model.input_price_per_million),
        output_price_per_million=float(model.output_price_per_million),
        local_key=model.local_key if model.is_local else "",
    )

"""Reads of the model registry."""

from __future__ import annotations

from arena.availability import Availability, model_base_url, models_availability
from arena.llm.types import ModelEndpoint
from arena.models import AIModel


def model_list_all() -> list[AIModel]:
    return list(AIModel.objects.order_by("-is_local", "name"))


def model_list_with_availability(*, ping: bool = True) -> list[tuple[AIModel, Availability]]:
    models = model_list_all()
    availability = models_availability(models, ping=ping)
    return [(model, availability[model.slug]) for model in models]


def model_list_available() -> list[AIModel]:
    """The models that can battle now."""
    return [model for model, avail in model_list_with_availability() if avail.available]


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
    )

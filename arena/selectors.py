"""Reads of the model registry."""

from __future__ import annotations

import dataclasses
import time
from urllib.parse import urlsplit

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, Max
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from arena.availability import (
    Availability,
    model_base_url,
    model_static_problem,
    models_availability,
)
from arena.llm.context import BYTES_PER_TOKEN, MESSAGE_OVERHEAD, input_budget
from arena.llm.types import ModelEndpoint
from arena.models import AIModel, ProviderKind
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
# second to the same few models. Saving a model clears it here at once (connected with the
# cache, when this module loads: django.setup() does not load it); other processes see the
# change within ENDPOINT_CACHE_SECONDS.
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


@receiver([post_save, post_delete], sender=AIModel, dispatch_uid="arena-endpoints-forget")
def model_endpoints_forget(**kwargs) -> None:
    global _prompt_limit
    _endpoints.clear()
    _prompt_limit = None


def model_endpoint(model: AIModel) -> ModelEndpoint:
    """What the LLM client layer needs to call this model (never the key itself)."""
    own = _own_endpoint(model)
    if not model.fallback_base_url:
        return own
    return dataclasses.replace(own, fallback=dataclasses.replace(
        own, provider=urlsplit(model.fallback_base_url).hostname or "fallback",
        provider_kind=ProviderKind.OPENAI, base_url=model.fallback_base_url,
        api_model=model.fallback_api_model or model.api_model,
        api_key_env=model.fallback_api_key_env or None, local_key=""))


def model_daily_cap(model: AIModel) -> float:
    """What the model may spend a day over every mode (0: no cap)."""
    cap = model.daily_spend_usd
    return float(settings.ARENA_MODEL_DAILY_SPEND_USD if cap is None else cap)


def _own_endpoint(model: AIModel) -> ModelEndpoint:
    return ModelEndpoint(
        slug=model.slug,
        provider=model.provider,
        provider_kind=model.provider_kind,
        api_model=model.api_model,
        base_url=model_base_url(model),
        api_key_env=model.api_key_env or None,
        max_tokens=model.max_tokens,
        system_prompt=model.system_prompt,
        input_price_per_million=float(model.input_price_per_million),
        output_price_per_million=float(model.output_price_per_million),
        local_key=model.local_key if model.is_local else "",
        daily_spend_usd=model_daily_cap(model),
    )


_prompt_limit: tuple[tuple, list[int]] | None = None


def prompt_char_limit(*, readers: int | None = 2) -> int:
    """The longest prompt that ``readers`` of the models a contest may draw (those configured
    and usable, without probing them) can all read with room for their answers: a battle
    needs two (the second-largest budget), a panel every model (``None``: the smallest). In
    characters of plain text (an unknown context window sets no limit), never above
    ``ARENA_PROMPT_MAX_CHARS``. Every page's text boxes count against them, so each process
    keeps the budgets while the registry is unchanged (how many models, the latest save: one
    small aggregate per page, and a flush or another process's save is seen at once)."""
    global _prompt_limit
    ceiling = settings.ARENA_PROMPT_MAX_CHARS
    try:
        version = tuple(AIModel.objects.aggregate(n=Count("pk"), at=Max("updated_at")).values())
        if _prompt_limit is None or _prompt_limit[0] != version:
            usable = [m for m in AIModel.objects.all() if model_static_problem(m) is None]
            _prompt_limit = (version, sorted((
                ceiling if (budget := input_budget(m)) is None
                else max((budget - MESSAGE_OVERHEAD) * BYTES_PER_TOKEN, 0)
                for m in usable), reverse=True))
    except DatabaseError:  # a page during an outage still renders, with the setting's
        return ceiling
    budgets = _prompt_limit[1]
    count = len(budgets) if readers is None else min(readers, len(budgets))
    return min(budgets[count - 1] if budgets else ceiling, ceiling)

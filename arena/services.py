"""Writes to the model registry."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from arena.model_config import load_model_specs
from arena.models import AIModel

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SyncResult:
    created: list[str]
    updated: list[str]
    retired: list[str]


@transaction.atomic
def models_sync(*, path: Path | None = None, include_local: bool | None = None) -> SyncResult:
    """Upsert the models file into the registry, idempotently.

    Models no longer in the file are kept (battles point at them) but marked
    as not listed, so they stop battling.
    """
    path = Path(path or settings.ARENA_MODELS_FILE)
    if include_local is None:
        include_local = settings.ARENA_LOCAL_MODELS
    specs = load_model_specs(path, include_local=include_local)
    created, updated = [], []
    for spec in specs:
        fields = spec.as_model_fields() | {"in_models_file": True}
        model, was_created = AIModel.objects.get_or_create(slug=spec.slug, defaults=fields)
        if was_created:
            created.append(spec.slug)
            continue
        changed = [name for name, value in fields.items() if getattr(model, name) != value]
        if changed:
            for name in changed:
                setattr(model, name, fields[name])
            model.full_clean()
            model.save(update_fields=[*changed, "updated_at"])
            updated.append(spec.slug)
    listed = {spec.slug for spec in specs}
    stale = AIModel.objects.filter(in_models_file=True).exclude(slug__in=listed)
    retired = sorted(stale.values_list("slug", flat=True))
    stale.update(in_models_file=False)
    logger.info(
        "models synced from %s: %d created, %d updated, %d retired",
        path, len(created), len(updated), len(retired),
    )
    return SyncResult(created=created, updated=updated, retired=retired)

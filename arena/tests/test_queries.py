"""arena.queries.update_each, the one plain UPDATE sent for many rows, stores what Django's
bulk_update stores, for every kind of value it is given (text, a null, a decimal, JSON, a
boolean, a time)."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from arena.models import AIModel, ProviderKind
from arena.queries import update_each

FIELDS = ["name", "context_tokens", "input_price_per_million", "aliases", "is_local",
          "created_at"]
CHANGES = [
    {"name": "Tab\there 'and' \"quotes\" \\ back", "context_tokens": None,
     "input_price_per_million": Decimal("1.2345"), "aliases": ["Quokka", "qk-2"],
     "is_local": True, "created_at": datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC)},
    {"name": "Ünïcode", "context_tokens": 128_000,
     "input_price_per_million": Decimal("0"), "aliases": [], "is_local": False,
     "created_at": datetime(1999, 12, 31, 0, 0, tzinfo=UTC)},
]


def _models(prefix: str) -> list[AIModel]:
    return [AIModel.objects.create(slug=f"{prefix}-{i}", name="before", provider="Fake",
                                   provider_kind=ProviderKind.OPENAI, api_model="m")
            for i in range(len(CHANGES))]


@pytest.mark.django_db
def test_update_each_stores_what_bulk_update_stores(django_assert_num_queries):
    plain, orm = _models("plain"), _models("orm")
    for models in (plain, orm):
        for model, change in zip(models, CHANGES, strict=True):
            for name, value in change.items():
                setattr(model, name, value)
    update_each(AIModel, plain, FIELDS)
    AIModel.objects.bulk_update(orm, FIELDS)

    def stored(models: list[AIModel]) -> list[dict]:
        return [AIModel.objects.values(*FIELDS).get(pk=m.pk) for m in models]

    assert stored(plain) == stored(orm) == CHANGES
    with django_assert_num_queries(0):
        update_each(AIModel, [], FIELDS)

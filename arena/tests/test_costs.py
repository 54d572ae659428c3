"""Costs: the ledger of model calls, the daily cap every mode obeys, approval of expensive
models, a model's fallback endpoint, and ``manage.py costs`` against a usage export
(:mod:`arena.llm.ledger`, :mod:`arena.costs`, :mod:`arena.llm.client`)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from arena.availability import AWAITS_APPROVAL, model_static_problem
from arena.llm import LLMError, stream_chat
from arena.llm.errors import LLMOverBudget
from arena.llm.ledger import call_purpose
from arena.llm.types import FALLBACK, OWN
from arena.models import ModelCall
from arena.selectors import model_endpoint
from testkit.fake_providers import Behaviour, FakeOpenAIServer
from testkit.registry import make_model

pytestmark = pytest.mark.django_db(transaction=True)
HI = [{"role": "user", "content": "Say hi"}]


@pytest.fixture
def fallback_server():
    """A second OpenAI-compatible server: the fallback endpoint (OpenRouter's stand-in). It
    asks for no key: its key variable would be the first fake's."""
    server = FakeOpenAIServer().start()
    server.api_key = None
    server.reply_text = "Hi from the fallback."
    try:
        yield server
    finally:
        server.stop()


def _spent(slug: str, cost: float, *, served_by: str = OWN, days_ago: int = 0) -> None:
    ModelCall.objects.create(model_slug=slug, provider="Fakeprov", endpoint=served_by,
                             ok=True, cost_usd=cost,
                             created_at=timezone.now() - timedelta(days=days_ago))


def test_each_call_is_entered_with_the_work_it_served_and_what_it_cost(fake_openai,
                                                                       fast_llm_retries):
    model = make_model(fake_openai, "alpha-7b", input_price_per_million=Decimal("2"),
                       output_price_per_million=Decimal("10"))
    with call_purpose("battles", "Response"):
        done = asyncio.run(stream_chat(model_endpoint(model), HI))
    fake_openai.script(Behaviour.status(400, "no"))
    with pytest.raises(LLMError):
        asyncio.run(stream_chat(model_endpoint(model), HI))
    ok, failed = ModelCall.objects.order_by("created_at")
    assert (ok.model_slug, ok.provider, ok.endpoint, ok.mode, ok.kind, ok.ok) == (
        "alpha-7b", "Fakeprov", OWN, "battles", "Response", True)
    assert (ok.input_tokens, ok.output_tokens) == (done.input_tokens, done.output_tokens)
    assert ok.cost_usd == pytest.approx(done.cost_usd) and ok.cost_usd > 0
    assert ok.latency_ms == done.latency_ms and ok.ttft_ms == done.ttft_ms
    assert (failed.ok, failed.error_kind, failed.mode) == (False, "LLMRequestRejected", "")


def test_a_model_over_its_daily_cap_is_not_called_and_not_drawn(fake_openai, settings):
    settings.ARENA_MODEL_DAILY_SPEND_USD = 0.05
    model = make_model(fake_openai, "alpha-7b")
    _spent("alpha-7b", 0.04)
    _spent("alpha-7b", 9.0, days_ago=1)  # yesterday's spend is not today's
    assert model_static_problem(model) is None
    asyncio.run(stream_chat(model_endpoint(model), HI))  # under the cap: it answers
    _spent("alpha-7b", 0.02)
    asked = len(fake_openai.chat_requests)
    with pytest.raises(LLMOverBudget) as over:
        asyncio.run(stream_chat(model_endpoint(model), HI))
    assert len(fake_openai.chat_requests) == asked  # nothing was sent
    assert "budget for today" in over.value.user_message
    assert "has spent its budget for today" in model_static_problem(model)
    model.daily_spend_usd = Decimal("0")  # its own entry: no cap at all
    model.save()
    assert model_static_problem(model) is None


def test_a_model_priced_above_the_line_waits_for_staff_approval(fake_openai, settings,
                                                                admin_client):
    settings.ARENA_APPROVAL_PRICE = 20.0
    costly = make_model(fake_openai, "costly-1", output_price_per_million=Decimal("60"))
    cheap = make_model(fake_openai, "cheap-1", output_price_per_million=Decimal("5"))
    assert model_static_problem(costly) == AWAITS_APPROVAL.format(price=60)
    assert model_static_problem(cheap) is None
    answer = admin_client.post("/admin/arena/aimodel/", {
        "action": "approve", "_selected_action": [costly.pk]})
    assert answer.status_code == 302
    costly.refresh_from_db()
    assert costly.approved_at is not None and model_static_problem(costly) is None


def test_a_failing_provider_hands_the_call_to_the_fallback_which_is_recorded(
        fake_openai, fallback_server, fast_llm_retries):
    model = make_model(fake_openai, "alpha-7b", fallback_base_url=fallback_server.base_url,
                       fallback_api_model="vendor/alpha-7b")
    # Three tokens reach the page, then the own provider's line drops; its retries get 500s.
    fake_openai.script(Behaviour.cut_stream(after_tokens=3), Behaviour.status(500),
                       Behaviour.status(500))
    seen: list[str] = []
    done = asyncio.run(stream_chat(model_endpoint(model), HI, on_delta=seen.append,
                                   on_restart=seen.clear))
    assert done.served_by == FALLBACK
    assert done.text == "Hi from the fallback." == "".join(seen)  # the cut text taken back
    assert [r.model for r in fallback_server.chat_requests] == ["vendor/alpha-7b"]
    calls = list(ModelCall.objects.order_by("created_at").values_list("endpoint", "ok",
                                                                       "provider"))
    assert calls == [(OWN, False, "Fakeprov"), (FALLBACK, True, "127.0.0.1")]


def test_a_request_the_provider_refuses_as_such_is_not_sent_to_the_fallback(
        fake_openai, fallback_server):
    model = make_model(fake_openai, "alpha-7b", fallback_base_url=fallback_server.base_url)
    fake_openai.script(Behaviour.status(400, "Your request is malformed."))
    with pytest.raises(LLMError):
        asyncio.run(stream_chat(model_endpoint(model), HI))
    assert fallback_server.chat_requests == []


def test_over_budget_on_its_own_endpoint_the_fallback_answers_until_it_is_over_too(
        fake_openai, fallback_server, settings):
    settings.ARENA_MODEL_DAILY_SPEND_USD = 1.0
    model = make_model(fake_openai, "alpha-7b", fallback_base_url=fallback_server.base_url)
    _spent("alpha-7b", 1.0)
    endpoint = model_endpoint(model)
    assert asyncio.run(stream_chat(endpoint, HI)).served_by == FALLBACK
    assert fake_openai.chat_requests == [] and model_static_problem(model) is None
    _spent("alpha-7b", 1.0, served_by=FALLBACK)
    with pytest.raises(LLMOverBudget):
        asyncio.run(stream_chat(endpoint, HI))
    assert "has spent its budget" in model_static_problem(model)


def test_the_models_file_names_a_cap_and_a_fallback(tmp_path, settings):
    from arena.model_config import ModelConfigError, load_model_specs

    path = tmp_path / "models.yaml"
    path.write_text("models:\n  - id: m-1\n    name: M\n    model: m\n"
                    "    base_url: https://api.example.com/v1\n    daily_spend_usd: 12.5\n"
                    "    fallback:\n      base_url: https://openrouter.ai/api/v1\n"
                    "      model: vendor/m\n      api_key_env: OPENROUTER_API_KEY\n")
    fields = load_model_specs(path)[0].as_model_fields()
    assert fields["daily_spend_usd"] == Decimal("12.5")
    assert (fields["fallback_base_url"], fields["fallback_api_model"],
            fields["fallback_api_key_env"]) == (
        "https://openrouter.ai/api/v1", "vendor/m", "OPENROUTER_API_KEY")
    path.write_text("models:\n  - id: m-1\n    name: M\n    model: m\n"
                    "    base_url: https://api.example.com/v1\n    fallback: {url: x}\n")
    with pytest.raises(ModelConfigError, match="fallback must be a mapping with at least"):
        load_model_specs(path)


def test_costs_compares_the_ledger_with_a_usage_export(tmp_path, fake_openai):
    make_model(fake_openai, "alpha-7b", api_model="alpha-2026-01")
    today = timezone.now().date()
    _spent("alpha-7b", 1.25)
    _spent("alpha-7b", 0.5)
    _spent("alpha-7b", 100.0, days_ago=3)  # outside the export's days
    export = tmp_path / "usage.csv"
    export.write_text(f"start_time,line_item,amount_value\n{today},\"alpha-2026-01, input\",1.0\n"
                      f"{today},\"alpha-2026-01, output\",0.5\n{today},other-model,0.25\n")
    out = StringIO()
    call_command("costs", str(export), stdout=out)
    lines = {line.split()[0]: line.split()[1:] for line in out.getvalue().splitlines()[2:]}
    assert lines["alpha-7b"] == ["1.7500", "1.5000", "+0.2500"]
    assert lines["other-model"] == ["0.0000", "0.2500", "-0.2500"]
    assert lines["total"] == ["1.7500", "1.7500", "+0.0000"]
    export.write_text("when,what\n1,2\n")
    with pytest.raises(CommandError, match="no model column"):
        call_command("costs", str(export))


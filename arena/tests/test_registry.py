"""The model registry: the models file, availability with reasons, /api/models."""

import os
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from arena.model_config import ModelConfigError, load_model_specs
from arena.models import AIModel
from arena.services import models_sync

FIXTURE_SLUGS = {
    "smollm2-135m", "qwen2.5-coder-0.5b", "gpt-4o-mini", "gpt-5-mini", "gpt-5-nano",
    "claude-sonnet-4.5", "gemini-2.5-flash", "deepseek-chat", "groq-gpt-oss-120b",
    "llama-3.2", "llama-3.1-8b",
}


def write(tmp_path, text: str):
    path = tmp_path / "models.yaml"
    path.write_text(text)
    return path


class TestModelsFile:
    def test_the_fixture_lists_the_local_models_and_the_seed_providers(self, settings):
        specs = load_model_specs(settings.ARENA_MODELS_FILE)
        assert {s.slug for s in specs} == FIXTURE_SLUGS
        assert {s.slug for s in specs if s.is_local} == {"smollm2-135m", "qwen2.5-coder-0.5b"}
        claude = next(s for s in specs if s.slug == "claude-sonnet-4.5")
        assert claude.provider_kind == "anthropic" and claude.api_key_env == "ANTHROPIC_API_KEY"
        assert float(claude.output_price_per_million) == 15.0

    def test_context_windows_come_from_the_file_or_the_local_server(self, settings):
        specs = {s.slug: s for s in load_model_specs(settings.ARENA_MODELS_FILE)}
        assert specs["smollm2-135m"].context_tokens == 4096  # the server's context per request
        assert specs["gpt-4o-mini"].context_tokens == 128_000

    def test_local_models_can_be_left_out(self, settings):
        specs = load_model_specs(settings.ARENA_MODELS_FILE, include_local=False)
        assert not any(s.is_local for s in specs)

    @pytest.mark.parametrize(
        ("text", "problem"),
        [
            ("models: [\n  - id: a\n    name: [unclosed", "malformed YAML at line"),
            ("models:\n  - id: m1\n    name: M\n    model: x\n    kind: cohere\n"
             "    base_url: http://h/v1", "model 'm1': unknown provider kind 'cohere'"),
            ("models:\n  - id: m2\n    name: M\n    base_url: http://h/v1",
             "model 'm2': missing required key 'model'"),
            ("models:\n  - id: m3\n    name: M\n    model: x", "model 'm3': an openai-kind model"),
            ("models:\n  - id: m4\n    name: M\n    model: x\n    base_url: http://h/v1\n"
             "    max_tokens: lots", "model 'm4': max_tokens must be"),
            ("models:\n  - id: m5\n    name: M\n    model: x\n    base_url: http://h/v1\n"
             "    colour: red", "model 'm5': unknown key 'colour'"),
            ("models: 3", "expected a top-level 'models:' list"),
            ("models:\n  - id: m6\n    name: M\n    model: x\n    base_url: http://h/v1\n"
             "    max_tokens: 500\n    context_tokens: 400", "model 'm6': context_tokens must be"),
        ],
    )
    def test_bad_configuration_is_one_clear_line(self, tmp_path, text, problem):
        with pytest.raises(ModelConfigError) as err:
            load_model_specs(write(tmp_path, text))
        message = str(err.value)
        assert problem in message
        assert "\n" not in message
        assert str(tmp_path) in message

    def test_seed_command_reports_a_bad_file_in_one_line(self, tmp_path, db):
        path = write(tmp_path, "models:\n  - id: m1\n    name: M\n    model: x\n    kind: nope\n")
        with pytest.raises(CommandError) as err:
            call_command("seed", file=str(path))
        assert "model 'm1': unknown provider kind 'nope'" in str(err.value)


@pytest.mark.django_db
class TestSync:
    def test_seed_is_idempotent(self):
        first = models_sync()
        second = models_sync()
        assert set(first.created) == FIXTURE_SLUGS
        assert second.created == [] and second.updated == []
        assert AIModel.objects.count() == len(FIXTURE_SLUGS)

    def test_a_changed_file_updates_and_retires(self, tmp_path):
        models_sync()
        path = write(tmp_path, "models:\n  - id: gpt-4o-mini\n    name: Renamed\n    model: m\n"
                               "    base_url: http://127.0.0.1:9/v1\n")
        result = models_sync(path=path)
        assert result.updated == ["gpt-4o-mini"]
        assert "smollm2-135m" in result.retired
        assert AIModel.objects.get(slug="gpt-4o-mini").name == "Renamed"
        assert not AIModel.objects.get(slug="smollm2-135m").in_models_file

    def test_no_key_is_ever_stored(self, monkeypatch):
        monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-123")
        models_sync()
        for model in AIModel.objects.all():
            assert "sk-secret-value-123" not in str(model.__dict__)


@pytest.mark.django_db
class TestAvailability:
    def test_unavailable_models_say_why(self, monkeypatch, settings):
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        settings.ARENA_LOCAL_MODELS = False
        models_sync(include_local=True)
        out = StringIO()
        call_command("validate_models", stdout=out)
        text = out.getvalue()
        assert "environment variable OPENAI_API_KEY is not set" in text
        assert "local models are turned off (ARENA_LOCAL_MODELS=0)" in text

    def test_unreachable_endpoint_is_unavailable_with_a_reason(self, tmp_path, settings):
        path = write(tmp_path, "models:\n  - id: nowhere\n    name: Nowhere\n    model: x\n"
                               "    base_url: http://127.0.0.1:9/v1\n")
        settings.ARENA_MODELS_FILE = path
        models_sync()
        out = StringIO()
        call_command("validate_models", "--ping", stdout=out)
        assert "endpoint unreachable: connection refused" in out.getvalue()
        assert Client().get("/api/models").json() == {"models": []}

    def test_models_file_on_loopback_lists_exactly_those(self, tmp_path, settings, fake_openai,
                                                         fake_anthropic):
        path = write(tmp_path, f"""models:
  - id: loop-a
    name: Loop A
    model: a
    base_url: {fake_openai.base_url}
    api_key_env: {fake_openai.api_key_env}
    provider: Loopback
  - id: loop-b
    name: Loop B
    model: b
    kind: anthropic
    base_url: {fake_anthropic.base_url}
    api_key_env: {fake_anthropic.api_key_env}
    provider: Loopback
""")
        settings.ARENA_MODELS_FILE = path
        settings.ARENA_LOCAL_MODELS = False
        models_sync()  # with local models off, the fixture's local models never load
        body = Client().get("/api/models").json()
        assert body == {"models": [
            {"model_id": "loop-a", "name": "Loop A", "provider": "Loopback", "status": "active"},
            {"model_id": "loop-b", "name": "Loop B", "provider": "Loopback", "status": "active"},
        ]}
        assert os.environ[fake_openai.api_key_env] not in str(body)


def test_a_mode_whose_figures_fail_shows_none_and_the_home_page_stays_up(caplog):
    from arena.modes import Mode, home_figures

    broken = Mode(key="broken", label="Broken", path="broken/", order=1,
                  figures="arena.tests.test_registry.no_such_function")
    assert home_figures(broken) == []
    assert "could not be read" in caplog.text

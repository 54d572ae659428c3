"""Seed 003's configuration lines: a key's ``prefix_len`` per models-file entry,
``GOOGLE_API_KEY`` as the seed names Google's key, and a ``.env`` file read by the commands."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from arena.api_keys import api_key, key_prefix, key_source, missing_key_message
from arena.availability import model_static_problem
from arena.env_file import load_env_file
from arena.llm import LLMConfigError, complete_chat
from arena.llm.types import ChatMessage
from arena.model_config import ModelConfigError, load_model_specs
from arena.models import AIModel
from arena.services import models_sync

KEY = "AIzaSyExampleKeyValue0123456789"
# A models-file entry naming Google's key as Google's SDKs do (panels/tests/test_key_status.py
# checks what the panel command prints of it).
ENTRY = ("models:\n  - id: gem\n    name: Gem\n    model: gemini-x\n    kind: openai\n"
         "    base_url: https://example.invalid/v1\n    api_key_env: GEMINI_API_KEY\n")


@pytest.fixture
def no_google_keys(monkeypatch):
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def models_file(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(ENTRY + extra)
    return path


class TestPrefixLen:
    def test_defaults_to_four_and_is_read_per_entry(self, tmp_path):
        assert load_model_specs(models_file(tmp_path))[0].prefix_len == 4
        assert load_model_specs(models_file(tmp_path, "    prefix_len: 7\n"))[0].prefix_len == 7

    @pytest.mark.parametrize("value", ["9", "-1", "four", "true"])
    def test_out_of_range_is_one_clear_line(self, tmp_path, value):
        with pytest.raises(ModelConfigError) as error:
            load_model_specs(models_file(tmp_path, f"    prefix_len: {value}\n"))
        assert "model 'gem': prefix_len must be a whole number from 0 to 8" in str(error.value)

    @pytest.mark.django_db
    def test_the_registry_keeps_it(self, tmp_path):
        models_sync(path=models_file(tmp_path, "    prefix_len: 6\n"))
        assert AIModel.objects.get(slug="gem").key_prefix_len == 6

    def test_a_prefix_never_shows_much_of_a_key(self):
        assert key_prefix(KEY, 0) == "(set)"
        assert key_prefix(KEY, 99) == KEY[:8] + "…"  # capped at 8 whatever the caller asks
        assert key_prefix("sk-short", 4) == "(set)"  # a short value shows nothing of itself
        assert key_prefix("0123456789ab", 4) == "0123…"


class TestGoogleApiKey:
    def test_either_name_serves_the_gemini_entry(self, no_google_keys):
        assert key_source("GEMINI_API_KEY") is None and api_key("GEMINI_API_KEY") == ""
        no_google_keys.setenv("GOOGLE_API_KEY", f" {KEY} ")
        assert key_source("GEMINI_API_KEY") == "GOOGLE_API_KEY"
        assert api_key("GEMINI_API_KEY") == KEY
        no_google_keys.setenv("GEMINI_API_KEY", "the-named-one-wins-000")
        assert api_key("GEMINI_API_KEY") == "the-named-one-wins-000"
        assert api_key("GOOGLE_API_KEY") == KEY

    def test_other_keys_have_no_alias(self, monkeypatch):
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("GOOGLE_API_KEY", KEY)
        assert key_source("OPENAI_API_KEY") is None
        assert missing_key_message("OPENAI_API_KEY") == \
            "environment variable OPENAI_API_KEY is not set"

    @pytest.mark.django_db
    def test_the_model_is_available_with_google_api_key_alone(self, tmp_path, no_google_keys):
        models_sync(path=models_file(tmp_path))
        model = AIModel.objects.get(slug="gem")
        assert model_static_problem(model) == \
            "environment variable GEMINI_API_KEY or GOOGLE_API_KEY is not set"
        no_google_keys.setenv("GOOGLE_API_KEY", KEY)
        assert model_static_problem(model) is None

    async def test_a_call_sends_the_key_found_under_the_seeds_name(self, fake_openai,
                                                                   no_google_keys):
        endpoint = fake_openai.endpoint(api_key_env="GEMINI_API_KEY")
        user = [ChatMessage(role="user", content="Hello")]
        with pytest.raises(LLMConfigError, match="GEMINI_API_KEY or GOOGLE_API_KEY is not set"):
            await complete_chat(endpoint, user)
        no_google_keys.setenv("GOOGLE_API_KEY", fake_openai.api_key)
        completion = await complete_chat(endpoint, user)  # the fake answers 401 to a wrong key
        assert completion.text


class TestEnvFile:
    def test_adds_what_the_environment_lacks_and_never_replaces(self, tmp_path, monkeypatch):
        env = tmp_path / ".env"
        env.write_text("# keys\nARENA_PROBE_A=from-file\nexport ARENA_PROBE_B='quoted value'\n"
                       "ARENA_PROBE_C=from-file\n")
        monkeypatch.setenv("ARENA_ENV_FILE", str(env))
        monkeypatch.setenv("ARENA_PROBE_C", "from-shell")
        # Set (then removed) through monkeypatch, so what the file adds is undone after the
        # test: a delenv of an unset variable records nothing to undo.
        for name in ("ARENA_PROBE_A", "ARENA_PROBE_B"):
            monkeypatch.setenv(name, "")
            monkeypatch.delenv(name)
        assert load_env_file() == ["ARENA_PROBE_A", "ARENA_PROBE_B"]
        assert os.environ["ARENA_PROBE_A"] == "from-file"
        assert os.environ["ARENA_PROBE_B"] == "quoted value"
        assert os.environ["ARENA_PROBE_C"] == "from-shell"

    def test_no_file_or_an_empty_setting_reads_nothing(self, tmp_path, monkeypatch):
        monkeypatch.setenv("ARENA_ENV_FILE", str(tmp_path / "absent.env"))
        assert load_env_file() == []
        monkeypatch.setenv("ARENA_ENV_FILE", "")
        assert load_env_file() == []

    def test_manage_py_reads_it_before_the_settings(self, tmp_path):
        env = tmp_path / ".env"
        env.write_text(f"GOOGLE_API_KEY={KEY}\nARENA_MAX_BODY_BYTES=4096\n")
        script = ("import os; from django.conf import settings; "
                  "print(os.environ.get('GOOGLE_API_KEY'), settings.DATA_UPLOAD_MAX_MEMORY_SIZE)")
        result = subprocess.run(
            [sys.executable, "manage.py", "shell", "--no-imports", "-c", script],
            cwd=settings.BASE_DIR,
            env={**{name: value for name, value in os.environ.items()
                    if name not in ("GOOGLE_API_KEY", "ARENA_MAX_BODY_BYTES")},
                 "ARENA_ENV_FILE": str(env)}, capture_output=True, text=True,
            timeout=120, check=False)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == [KEY, "4096"]

    def test_the_run_command_reads_it_before_anything_starts(self, tmp_path):
        """The run command takes its port from .env: a port already taken there makes it
        say so and stop, before it starts anything."""
        taken = socket.socket()
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = tmp_path / ".env"
        env.write_text(f"PORT={port}\n")
        try:
            result = subprocess.run(
                [sys.executable, "-m", "arena.devserver"], cwd=settings.BASE_DIR,
                env={**{name: value for name, value in os.environ.items() if name != "PORT"},
                     "ARENA_ENV_FILE": str(env), "ARENA_VAR_DIR": str(tmp_path / "var")},
                capture_output=True, text=True, timeout=120, check=False)
        finally:
            taken.close()
        said = result.stdout + result.stderr
        assert result.returncode == 2, said
        assert "read PORT from .env" in said and f"cannot listen on port {port}" in said

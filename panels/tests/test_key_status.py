"""What ``manage.py panel`` prints of a key (seed 003's validate_api_keys): the variable
holding it, found under either of Google's names, and the entry's ``prefix_len`` characters."""

import pytest

from arena.models import AIModel
from arena.services import models_sync
from arena.tests.test_seed003_config import ENTRY, KEY
from panels.display import key_status


@pytest.fixture
def gem(tmp_path, monkeypatch):
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "models.yaml"
    path.write_text(ENTRY + "    prefix_len: 6\n")
    models_sync(path=path)
    return AIModel.objects.get(slug="gem")


@pytest.mark.django_db
def test_the_entry_prefix_len_is_what_is_printed(gem, monkeypatch):
    assert key_status(gem.api_key_env, gem.key_prefix_len) == \
        "[red]GEMINI_API_KEY or GOOGLE_API_KEY not set[/red]"
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    status = key_status(gem.api_key_env, gem.key_prefix_len)
    assert status == f"[green]GEMINI_API_KEY {KEY[:6]}…[/green]"


@pytest.mark.django_db
def test_the_seeds_google_api_key_is_named_as_the_source(gem, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    assert key_status(gem.api_key_env, 0) == "[green]GOOGLE_API_KEY (set)[/green]"
    assert key_status("") == "no key needed"

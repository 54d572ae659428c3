"""The architecture is enforced, not hoped for: the import-linter contracts in pyproject.toml
(modes depend on arena/ and never on each other; arena/ and leaderboard/ import no mode;
leaderboard/ratings/ imports nothing of the project, nor Django; the operations page, ops/,
imports no mode and nothing imports it; no production code imports the test kit, testkit/,
which only the tests may)."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings


def test_import_contracts_are_kept():
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint), "--no-cache"], cwd=settings.BASE_DIR,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Contracts: 5 kept, 0 broken." in result.stdout


@pytest.mark.django_db
def test_the_platform_mounts_what_each_mode_declares(client):
    from arena.celery import app
    from arena.modes import modes
    from arena.routing import websocket_urlpatterns

    assert [m.key for m in modes()] == ["battle", "panel", "debates", "voice", "leaderboard",
                                        "data"]
    home = client.get("/").content.decode()
    for mode in modes():
        assert f'href="{mode.url}"' in home
        assert client.get(mode.url).status_code == 200
    # As celery beat starts: the tasks imported, then the app finalized, which adds the
    # modes' entries to the platform's (arena.celery).
    app.loader.import_default_modules()
    app.finalize()
    assert {"arena-steps-requeue-stale", "debates-stalled-sweep", "agents-stalled-sweep",
            "leaderboard-hourly"} <= set(app.conf.beat_schedule)
    routes = [str(route.pattern) for route in websocket_urlpatterns]
    assert routes == ["ws/battles/<str:battle_id>/", "ws/panels/<str:panel_id>/",
                      "ws/debates/<str:debate_id>/", "battles/<str:battle_id>/agent-stream"]
    paths = client.get("/api/openapi.json").json()["paths"]
    assert {"/api/battles", "/api/panel/run", "/api/debate/run", "/api/leaderboard",
            "/api/models"} <= set(paths)
    # A mode's own root paths (seed 002's) are mounted beside /api/, with their own docs.
    voice = client.get("/voice-api/openapi.json").json()["paths"]
    assert {"/battles/generate", "/battles/{battle_id}/vote",
            "/battles/{battle_id}/agent-metrics"} <= set(voice)
    assert not set(voice) & set(paths)
    from arena.modes import Mode

    assert not Mode(key="x", label="X", path="x/", order=99).is_open  # "not open yet"


def test_no_two_api_schemas_share_a_name():
    """django-ninja names a schema's OpenAPI component after its class: a second class of
    the same name in another mode's API silently replaces the first in the documentation."""
    from django.utils.module_loading import import_string
    from ninja import Schema

    from arena.modes import modes

    for mode in modes():
        if mode.api_router:
            import_string(mode.api_router)
    seen: dict[str, str] = {}
    stack = list(Schema.__subclasses__())
    while stack:
        schema = stack.pop()
        stack.extend(schema.__subclasses__())
        if not schema.__module__.startswith(("arena.", "battles.", "panels.", "debates.",
                                             "agents.", "leaderboard.")):
            continue
        where = f"{schema.__module__}.{schema.__qualname__}"
        assert seen.setdefault(schema.__name__, where) == where, (
            f"{where} and {seen[schema.__name__]} share a schema name")


def test_every_folder_of_tests_is_one_the_suite_collects():
    """An app's tests outside pytest's testpaths never run, in CI or anywhere (the ops and
    accounts apps' tests went uncollected until this test)."""
    import tomllib

    root = Path(settings.BASE_DIR)
    collected = set(tomllib.loads((root / "pyproject.toml").read_text())
                    ["tool"]["pytest"]["ini_options"]["testpaths"])
    holding = {path.relative_to(root).parts[0] for path in root.glob("*/**/test_*.py")
               if not path.relative_to(root).parts[0].startswith(".")}
    assert holding - collected == set()

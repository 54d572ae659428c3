"""What the production image is built from: the source, never a developer's environment,
secrets, data or history (``.dockerignore``), and never without what the Dockerfile copies."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEFT_OUT = (".venv", ".env", "var", ".git", "__pycache__")
# Development only: the test kit (fake provider servers, pytest plugins), the tests outside the
# packages and the benchmarks.
DEVELOPMENT_ONLY = ("testkit", "tests", "conftest.py", "benchmarks")
NEEDED = ("pyproject.toml", "uv.lock", "requirements-uv.txt", "manage.py", "arena", "battles",
          "panels", "debates", "agents", "leaderboard", "templates", "static", "fixtures")


def patterns() -> tuple[set[str], set[str]]:
    lines = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    rules = [line for line in lines if line and not line.startswith("#")]
    ignored = {rule.removeprefix("**/") for rule in rules if not rule.startswith("!")}
    kept = {rule[1:] for rule in rules if rule.startswith("!")}
    return ignored, kept


def test_the_context_leaves_out_environments_secrets_data_and_history():
    ignored, _ = patterns()
    assert set(LEFT_OUT) <= ignored, sorted(set(LEFT_OUT) - ignored)
    assert ".env.*" in ignored  # .env.production and the like


def test_the_context_leaves_out_the_test_kit_and_the_tests():
    ignored, kept = patterns()
    for name in DEVELOPMENT_ONLY:
        assert (ROOT / name).exists(), name
        assert name in ignored and name not in kept, f"{name} is in the image"


def test_every_apps_tests_are_left_out_too():
    ignored, _ = patterns()
    assert "**/tests" in {line.strip() for line in (ROOT / ".dockerignore").read_text()
                          .splitlines()}, "only the top-level tests/ is left out"
    assert "tests" in ignored


def test_the_installed_package_holds_no_test_kit():
    """The image installs the project (``uv sync --no-editable``): its packages are those
    pyproject's ``packages.find`` matches (setuptools matches the names as fnmatch does)."""
    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"]["find"]
    for name in ("testkit", "testkit.fake_providers", "arena.tests", "agents.tests.fakes"):
        included = any(fnmatchcase(name, pattern) for pattern in found["include"])
        excluded = any(fnmatchcase(name, pattern) for pattern in found.get("exclude", ()))
        assert not included or excluded, f"{name} is installed"


def test_the_context_keeps_everything_the_dockerfile_copies_and_runs():
    ignored, kept = patterns()
    copied = re.findall(r"^COPY (.+) \./?$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    named = {name for line in copied for name in line.split() if name != "."}
    for name in sorted(named | set(NEEDED)):
        assert (ROOT / name).exists(), name
        assert name not in ignored or name in kept, f"{name} is left out of the image"

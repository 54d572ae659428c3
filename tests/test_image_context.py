"""What the production image is built from: the source, never a developer's environment,
secrets, data or history (``.dockerignore``), and never without what the Dockerfile copies."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEFT_OUT = (".venv", ".env", "var", ".git", "__pycache__")
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


def test_the_context_keeps_everything_the_dockerfile_copies_and_runs():
    ignored, kept = patterns()
    copied = re.findall(r"^COPY (.+) \./?$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    named = {name for line in copied for name in line.split() if name != "."}
    for name in sorted(named | set(NEEDED)):
        assert (ROOT / name).exists(), name
        assert name not in ignored or name in kept, f"{name} is left out of the image"

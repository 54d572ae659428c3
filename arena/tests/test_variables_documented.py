"""Every environment variable the arena reads is documented in the README."""

import ast
import re
from pathlib import Path

import yaml
from django.conf import settings

from arena.api_keys import KEY_ALIASES

ROOT = Path(settings.BASE_DIR)
SOURCES = ["arena", "battles", "debates", "agents", "panels", "leaderboard", "benchmarks",
           "dev.py"]
NAME = re.compile(r"^[A-Z][A-Z0-9_]+$")
KEYWORDS = {"port_env", "key_env", "api_key_env"}  # arguments that name a variable


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def _named(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.match(node.value):
        return node.value
    return None


def variables_read(tree: ast.AST) -> set[str]:
    """Names passed to the settings' env_* helpers, os.environ.get / [] (read, not set) /
    setdefault, os.getenv, or an argument that names a key's variable."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            reads = (isinstance(func, ast.Name) and func.id.startswith("env_")) or (
                isinstance(func, ast.Attribute) and (
                    (func.attr in {"get", "setdefault"} and _is_environ(func.value))
                    or func.attr == "getenv"))
            if reads and (name := _named(node.args[0])):
                found.add(name)
        # os.environ["X"] read; os.environ["X"] = ... is the arena setting one for a library
        # (PROMETHEUS_MULTIPROC_DIR), nothing a person sets.
        if isinstance(node, ast.Subscript) and _is_environ(node.value) and not isinstance(
                node.ctx, ast.Store) and (name := _named(node.slice)):
            found.add(name)
        if isinstance(node, ast.keyword) and node.arg in KEYWORDS and (
                name := _named(node.value)):
            found.add(name)
    return found


def project_files():
    for source in SOURCES:
        path = ROOT / source
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            parts = file.relative_to(ROOT).parts
            if "tests" in parts or "testing" in parts or "migrations" in parts:
                continue
            yield file


def test_every_variable_the_arena_reads_is_in_the_readme():
    read: set[str] = set()
    for file in project_files():
        read |= variables_read(ast.parse(file.read_text(), filename=str(file)))
    models = yaml.safe_load((ROOT / "fixtures" / "models.yaml").read_text())
    read |= {m["api_key_env"] for m in models["models"] if m.get("api_key_env")}
    assert {"DATABASE_URL", "ARENA_LEADERBOARD_ANSWER_SECONDS", "VAPI_API_KEY",
            "ARENA_LOCAL_MODEL_PORT_QWEN", "GROQ_API_KEY"} <= read  # the search finds them
    readme = (ROOT / "README.md").read_text()
    assert sorted(name for name in read if f"`{name}`" not in readme) == []


ENV_LINE = re.compile(r"^#?\s*([A-Z][A-Z0-9_]+)=", re.MULTILINE)
# Read by the tooling around the arena, not by the arena itself: the README says how.
NOT_IN_ENV_EXAMPLE = {"ARENA_AUDIT_SERVICE_URL", "ARENA_AUDIT_ALLOWLIST",
                      "ARENA_SKIP_BROWSER_INSTALL", "ARENA_SHARED_DATA", "ARENA_TEST_PROCESSES",
                      "ARENA_TEST_WAIT_SCALE", "DJANGO_SETTINGS_MODULE",
                      # It names the file the variables are read from.
                      "ARENA_ENV_FILE"}


def test_every_variable_the_arena_reads_is_in_the_env_example_and_nothing_else():
    """`.env.example` lists each variable once (commented, with its default), and only
    variables something reads: a setting added or dropped changes it too."""
    read: set[str] = set()
    for file in project_files():
        read |= variables_read(ast.parse(file.read_text(), filename=str(file)))
    models = yaml.safe_load((ROOT / "fixtures" / "models.yaml").read_text())
    read |= {m["api_key_env"] for m in models["models"] if m.get("api_key_env")}
    read |= {alias for aliases in KEY_ALIASES.values() for alias in aliases}
    listed = ENV_LINE.findall((ROOT / ".env.example").read_text())
    assert sorted({n for n in listed if listed.count(n) > 1}) == []
    assert sorted(read - set(listed) - NOT_IN_ENV_EXAMPLE) == []
    assert sorted(set(listed) - read) == []

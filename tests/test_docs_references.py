"""The docs name real code: every backticked dotted path in docs/*.md (``battles.services.
battle_vote``, ``arena.steps.step_run``) must import, so a rename that forgets the docs fails
here instead of leaving a page that points at nothing.

A reference is a backticked token shaped like a dotted path and starting with one of the
project's packages; it resolves by importing its longest importable module prefix and
reading the rest as attributes. Paths written with slashes (``battles/steps.py``) are not
checked: they are how the docs name files and packages still being moved.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PACKAGES = ("arena.", "battles.", "panels.", "debates.", "agents.", "leaderboard.", "testkit.")
REFERENCE = re.compile(r"`([a-z_]+(\.[A-Za-z_][A-Za-z0-9_]*)+)`")

# Each page that must exist, and the fewest references it must hold (an empty or
# hand-waving page fails).
REQUIRED = {
    "architecture.md": 60,
    "flows/vote-to-rating.md": 15,
    "flows/text-battle.md": 15,
    "flows/debate-step.md": 15,
    "flows/voice-call.md": 15,
}


def references(text: str) -> list[str]:
    """The backticked dotted paths into the project's packages, in order, each once."""
    found = (match.group(1) for match in REFERENCE.finditer(text))
    return list(dict.fromkeys(ref for ref in found if ref.startswith(PACKAGES)))


def resolve(reference: str) -> object:
    """The module, class, function or attribute ``reference`` names; raises if none."""
    parts = reference.split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        try:
            found = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            # Only "this prefix is not a module" moves on to a shorter prefix; a module that
            # exists but fails to import is a failure of its own.
            if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
                continue
            raise
        for attribute in parts[end:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(f"no module of {reference!r} imports")


def unresolved(reference: str) -> str | None:
    """Why ``reference`` does not resolve, or None when it does."""
    try:
        resolve(reference)
    except Exception as exc:  # noqa: BLE001 - any failure is the report
        return f"{reference}: {type(exc).__name__}: {exc}"
    return None


def doc_pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md")) if DOCS.is_dir() else []


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_every_code_reference_in_the_page_resolves(page):
    refs = references(page.read_text(encoding="utf-8"))
    broken = [why for why in map(unresolved, refs) if why is not None]
    assert not broken, (f"{len(broken)} of {len(refs)} references in docs/"
                        f"{page.relative_to(DOCS)} do not resolve:\n" + "\n".join(broken))


@pytest.mark.parametrize(("name", "least"), REQUIRED.items())
def test_the_page_exists_and_names_the_code(name, least):
    page = DOCS / name
    assert page.is_file(), f"docs/{name} is missing"
    refs = references(page.read_text(encoding="utf-8"))
    assert len(refs) >= least, (f"docs/{name} names {len(refs)} pieces of code in backticked "
                                f"dotted paths; at least {least} expected")


def test_a_wrong_name_is_reported_and_a_right_one_is_not():
    text = ("`battles.services.battle_vote` `battles.services.battle_vot` "
            "`battles.nowhere.battle_vote` `leaderboard.boards.Board.from_queryset` "
            "`dev.py` `battles/steps.py`")
    refs = references(text)
    assert refs == ["battles.services.battle_vote", "battles.services.battle_vot",
                    "battles.nowhere.battle_vote", "leaderboard.boards.Board.from_queryset"]
    assert [ref for ref in refs if unresolved(ref)] == ["battles.services.battle_vot",
                                                        "battles.nowhere.battle_vote"]

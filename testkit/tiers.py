"""Test tiers, read off what each test needs: the fast tier runs by default, ``--all`` runs
every tier (CI does). A test's tier comes from its fixtures, so nobody has to remember a
mark; a test whose need no fixture shows (a real model on the CPU) carries the mark itself.

    fast         the database, the embedded Redis, fake provider servers in this process
    worker       a real Celery worker (``celery_worker``)
    live         a server or a process of its own (daphne, a worker process, dev.py)
    browser      a real Chromium
    local_model  a real local model on the CPU
"""

from __future__ import annotations

import pytest

TIERS = ("worker", "live", "browser", "local_model")

# fixture -> the tier a test using it (directly or through another fixture) belongs to
TIER_OF_FIXTURE = {
    "celery_worker": "worker",
    "celery_worker_session": "worker",
    "live_server": "live",
    "asgi_live_server": "live",
    "asgi_live_server_session": "live",
    "test_process_env": "live",
    "chromium": "browser",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--all", action="store_true", dest="all_tiers",
                     help="run every tier (worker, live, browser, local_model), not only the "
                          "fast one")


def pytest_configure(config: pytest.Config) -> None:
    for tier in TIERS:
        config.addinivalue_line("markers", f"{tier}: a test of the {tier} tier "
                                           "(testkit.tiers)")


def tiers_of(item: pytest.Item) -> set[str]:
    found = {TIER_OF_FIXTURE[name] for name in getattr(item, "fixturenames", ())
             if name in TIER_OF_FIXTURE}
    return found | {mark.name for mark in item.iter_markers() if mark.name in TIERS}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for tier in tiers_of(item) - {m.name for m in item.iter_markers()}:
            item.add_marker(getattr(pytest.mark, tier))
    if not fast_tier_only(config):
        return
    fast, slow = [], []
    for item in items:
        (slow if tiers_of(item) else fast).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = fast
        config._arena_tier_note = (  # noqa: SLF001 - read back in the summary below
            f"fast tier: {len(fast)} tests run; {len(slow)} of the worker, live, browser "
            "and local_model tiers left out (python3 dev.py test --all runs every tier)")


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    note = getattr(config, "_arena_tier_note", None)
    if note is None and fast_tier_only(config) and config.pluginmanager.hasplugin("dsession"):
        note = ("fast tier, in parallel processes: the worker, live, browser and local_model "
                "tiers were left out (python3 dev.py test --all runs every tier)")
    if note:
        terminalreporter.write_line(note)


def fast_tier_only(config: pytest.Config) -> bool:
    return not (config.getoption("all_tiers") or config.getoption("markexpr"))

"""The mode registry: each mode declares itself in its ``AppConfig``; the platform finds it.

A mode's app config subclasses :class:`ModeConfig` and sets ``mode`` (import the module, not
the classes: Django picks the one AppConfig class that ``apps.py`` holds)::

    from arena import modes

    class BattlesConfig(modes.ModeConfig):
        name = "battles"
        mode = modes.Mode(
            key="battle", label="Battle", path="battle/", order=10,
            summary="Two anonymous models answer your prompt; vote, then see who was who.",
            urls="battles.urls", api_router="battles.api.router",
            websocket_routes="battles.routing.websocket_urlpatterns",
            beat={"battles-...": {"task": "...", "schedule": 60.0}},
            figures="battles.selectors.home_figures",
        )

:mod:`arena.urls` mounts every mode's pages (or a "not open yet" page) and its ``root_urls``
(a seed's own paths outside /api/, e.g. voice battles' ``/battles/...``), :mod:`arena.api` its
API router, :mod:`arena.routing` its sockets, :mod:`arena.context_processors` its navigation
entry, :mod:`arena.celery` adds its beat entries to Celery's schedule,
:mod:`arena.alerts.rules` evaluates its alert rules with the platform's, and the operations
page counts its ``operations`` (:mod:`arena.operations`). Boards
are declared in each app's ``boards.py`` (see :mod:`leaderboard.boards`). Adding a mode edits
no central list; references are dotted paths, so the platform imports no mode.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.apps import AppConfig, apps
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Figure:
    """One live number of a mode on the home page, e.g. ``Figure("battles fought", 1204)``."""

    label: str
    value: int | str
    url: str = ""


@dataclass(frozen=True)
class Mode:
    key: str  # navigation key, e.g. "battle"
    label: str  # navigation label
    path: str  # URL prefix of its pages, e.g. "battle/"
    order: int  # position in the navigation
    summary: str = ""  # one line for the home page
    urls: str | None = None  # dotted path of its URLconf; None: the mode is not open yet
    api_router: str | None = None  # dotted path of its ninja Router
    websocket_routes: str | None = None  # dotted path of a list of URL patterns
    # Its beat entries, or the dotted path of them where a schedule needs Celery's classes
    # (a crontab): the app config is loaded by django.setup(), which loads no Celery.
    beat: Mapping[str, dict[str, Any]] | str = field(default_factory=dict)
    figures: str | None = None  # dotted path of a callable returning its home-page Figures
    root_urls: str | None = None  # URLconf mounted at the site root (a seed's own paths)
    # dotted path of its votes' arena.contests.counting.CountedVotes (the integrity sweep's)
    counted_votes: str | None = None
    # "app_label.Model.field" of every column holding a visitor's session key: moved to the
    # new key when the session's key is rotated (arena.sessions.session_rotate)
    session_fields: tuple[str, ...] = ()
    # dotted path of a callable (old_key, new_key) run before its session_fields move, for
    # rows that merge rather than move (arena.visitor_merge)
    merge_visitor: str | None = None
    # dotted path of a callable that loads what the mode's sockets would otherwise load on
    # first use (models, audio), run by each web process once it serves (arena.webserver)
    warm_up: str | None = None
    # dotted path of a list of its arena.alerts.Rule, evaluated with the platform's (a debate
    # failure rate: debates.alerts.RULES)
    alerts: str | None = None
    # dotted path of its arena.operations.Operations: its kinds of work and its votes, as the
    # operations page (/ops/) counts them
    operations: str | None = None

    def __post_init__(self) -> None:
        if not self.path.endswith("/") or self.path.startswith("/"):
            raise ImproperlyConfigured(f"mode {self.key}: path must look like 'name/'")

    @property
    def url(self) -> str:
        return f"/{self.path}"

    @property
    def is_open(self) -> bool:
        return self.urls is not None


class ModeConfig(AppConfig):
    """An app that is a mode (or a section with a page in the navigation)."""

    mode: Mode


def modes() -> list[Mode]:
    """Every declared mode, in navigation order; keys and paths must be unique."""
    found = [config.mode for config in apps.get_app_configs()
             if isinstance(config, ModeConfig)]
    found.sort(key=lambda m: (m.order, m.key))
    for attribute in ("key", "path"):
        values = [getattr(m, attribute) for m in found]
        duplicates = {v for v in values if values.count(v) > 1}
        if duplicates:
            raise ImproperlyConfigured(f"two modes declare the same {attribute}: {duplicates}")
    return found


def counted_votes() -> list:
    """Every mode's :class:`arena.contests.counting.CountedVotes`."""
    return [import_string(m.counted_votes) for m in modes() if m.counted_votes]


def operations() -> list[tuple[Mode, Any]]:
    """Every mode's :class:`arena.operations.Operations`, with the mode."""
    return [(m, import_string(m.operations)) for m in modes() if m.operations]


def websocket_urlpatterns() -> list:
    return [route for m in modes() if m.websocket_routes
            for route in import_string(m.websocket_routes)]


def beat_schedule() -> dict[str, dict[str, Any]]:
    schedule: dict[str, dict[str, Any]] = {}
    for mode in modes():
        entries = import_string(mode.beat) if isinstance(mode.beat, str) else mode.beat
        for name, entry in entries.items():
            if name in schedule:
                raise ImproperlyConfigured(f"two modes declare the beat entry {name!r}")
            schedule[name] = dict(entry)
    return schedule


def warm_up() -> None:
    """Run every mode's ``warm_up``, one after the other (blocking); one that fails is
    logged, and what it did not load is loaded on first use instead."""
    for mode in modes():
        if mode.warm_up:
            try:
                import_string(mode.warm_up)()
            except Exception:
                logger.exception("mode %s could not warm up", mode.key)


def home_figures(mode: Mode) -> list[Figure]:
    """A mode's live figures; a mode whose figures fail to load shows none (and is logged),
    the home page stays up."""
    if not mode.figures:
        return []
    try:
        return list(import_string(mode.figures)())
    except Exception:
        logger.exception("the home figures of mode %s could not be read", mode.key)
        return []

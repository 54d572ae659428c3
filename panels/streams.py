"""A panel's live stream: every saved step and stage change is announced to its page."""

from __future__ import annotations

from django.db import transaction

from arena.streaming import publish_sync


def panel_group(panel_id) -> str:
    return f"panel.{panel_id}"


def announce_panel(panel_id, **payload) -> None:
    """After commit, tell open pages that the panel changed (they re-read it)."""
    transaction.on_commit(
        lambda: publish_sync(panel_group(panel_id), {"event": "changed", **payload}))


def announce_step(panel_id, kind: str) -> None:
    announce_panel(panel_id, step=kind)

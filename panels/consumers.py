"""The panel socket: tells an open panel page each time an answer, a judgement or the stage
changes, so the page shows them as they are written (no polling)."""

from __future__ import annotations

from arena.streaming import StreamConsumer
from panels.selectors import panel_visible
from panels.streams import panel_group


class PanelConsumer(StreamConsumer):
    def authorize(self, *, session_key, panel_id):
        panel = panel_visible(panel_id=panel_id)
        if panel is None:
            return None
        return panel_group(panel.id), []

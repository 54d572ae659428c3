"""The debate socket: speeches as they are written and every committed step, for anyone who
may see the debate. Only positions and rounds travel, never a model."""

from __future__ import annotations

from arena.streaming import StreamConsumer
from debates.selectors import debate_streaming_steps, debate_visible
from debates.streams import debate_group, step_meta


class DebateConsumer(StreamConsumer):
    def authorize(self, *, session_key, debate_id):
        debate = debate_visible(debate_id=debate_id)
        if debate is None:
            return None
        return debate_group(debate.pk), [(str(s.pk), step_meta(s))
                                         for s in debate_streaming_steps(debate=debate)]

"""The debate socket: speeches as they are written and every committed step, for anyone who
may see the debate. Only positions and rounds travel, never a model. On connecting, a
``progress`` message says where the debate stands (``currentRound``, ``currentSpeaker``)."""

from __future__ import annotations

from arena.streaming import StreamConsumer
from debates.progress import progress_of
from debates.selectors import debate_streaming_steps, debate_visible
from debates.streams import debate_group, step_meta


class DebateConsumer(StreamConsumer):
    progress: dict | None = None

    def authorize(self, *, session_key, debate_id):
        debate = debate_visible(debate_id=debate_id)
        if debate is None:
            return None
        self.progress = progress_of(debate, list(debate.steps.all())).as_json()
        return debate_group(debate.pk), [(str(s.pk), step_meta(s))
                                         for s in debate_streaming_steps(debate=debate)]

    async def connect(self):
        await super().connect()
        if self.group:
            await self.send_json({"event": "progress", **self.progress})

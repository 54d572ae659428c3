"""The debate socket: speeches as they are written and every committed step, for anyone who
may see the debate. Only positions and rounds travel, never a model. On connecting, the first
message is a ``progress`` that says where the debate stands (``currentRound``,
``currentSpeaker``), read once the group is joined: a step committed while connecting is then
either in it or announced after it as ``changed``, never lost in between."""

from __future__ import annotations

from channels.db import database_sync_to_async

from arena.streaming import StreamConsumer
from debates.progress import debate_progress
from debates.selectors import debate_streaming_steps, debate_visible
from debates.streams import debate_group, step_meta


class DebateConsumer(StreamConsumer):
    debate_id = None

    def authorize(self, *, session_key, debate_id):
        debate = debate_visible(debate_id=debate_id)
        if debate is None:
            return None
        self.debate_id = debate.pk
        return debate_group(debate.pk), [(str(s.pk), step_meta(s))
                                         for s in debate_streaming_steps(debate=debate)]

    async def joined(self) -> None:
        progress = await database_sync_to_async(debate_progress)(debate_id=self.debate_id)
        if progress is not None:
            await self.send_json({"event": "progress", **progress.as_json()})

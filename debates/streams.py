"""A debate's live stream: speeches as they are written, and every committed step.

Turns stream through the platform's relay under the step's id, with the round and position
as meta (never a model); each committed step is announced as ``changed``, with the debate's
``currentRound`` and ``currentSpeaker`` as committed (:mod:`debates.progress`), so open
pages show them at once and re-read the debate.
"""

from __future__ import annotations

from django.db import transaction

from arena.streaming import StreamRelay, publish_sync


def debate_group(debate_id) -> str:
    return f"debate.{debate_id}"


def step_meta(step) -> dict:
    return {"step": str(step.pk), "round": step.round, "position": step.position}


def turn_relay(step) -> StreamRelay:
    return StreamRelay(group=debate_group(step.debate_id), stream_id=str(step.pk),
                       meta=step_meta(step))


def announce_debate(debate_id, **payload) -> None:
    """After commit, tell open pages that the debate changed (they re-read it) and where it
    stands now."""
    transaction.on_commit(lambda: _announce(debate_id, payload))


def _announce(debate_id, payload: dict) -> None:
    # debates.models imports this module: the progress (which reads the models) is
    # imported when a debate is announced.
    from debates.progress import debate_progress  # noqa: PLC0415

    progress = debate_progress(debate_id=debate_id)
    where = progress.as_json() if progress is not None else {}
    publish_sync(debate_group(debate_id), {"event": "changed", **payload, **where})

"""The voice page (``/voice/``): the whole battle runs in the browser against the JSON API and
the audio socket; and a battle's recordings, for its owner after the vote."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from agents.models import (
    SUB_DIMENSIONS,
    AgentConversation,
    AgentVote,
    ConversationStatus,
    recordings_dir,
)
from agents.selectors import agent_battle_owned
from agents.services import available_agents
from arena.sessions import session_key_for


@require_GET
def voice_page(request: HttpRequest) -> HttpResponse:
    agents, reasons = available_agents()
    return render(request, "agents/voice.html", {
        "ready": len(agents) >= 2, "reasons": sorted(reasons.items()),
        "all_offline": bool(agents) and all(a.is_offline_demo for a in agents),
        "dimensions": [(key, key.capitalize()) for key in SUB_DIMENSIONS],
    })


@require_GET
def recording(request: HttpRequest, battle_id, label: str, side: str) -> FileResponse:
    """One side of one call, only to the battle's owner and only after the vote."""
    session_key = session_key_for(request, create=False)
    battle = agent_battle_owned(battle_id=battle_id, session_key=session_key)
    if battle is None or side not in ("caller", "agent") or label not in ("a", "b") or \
            not AgentVote.objects.filter(battle=battle).exists():
        raise Http404("No such recording.")
    conversation = AgentConversation.objects.filter(
        battle=battle, agent_label=label, status=ConversationStatus.DONE).first()
    if conversation is None:
        raise Http404("No such recording.")
    relative = conversation.user_audio_path if side == "caller" else conversation.agent_audio_path
    path = recordings_dir() / relative
    if not path.is_file():
        raise Http404("No such recording.")
    return FileResponse(path.open("rb"), content_type="audio/wav")

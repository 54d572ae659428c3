"""The voice page (``/voice/``): the whole battle runs in the browser against the JSON API and
the audio socket; and a battle's recordings, for its owner (before the vote too)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseNotFound
from django.shortcuts import render
from django.views.decorators.http import require_GET

from agents.models import SUB_DIMENSIONS
from agents.selectors import conversation_recording
from agents.services import available_agents
from arena.sessions import session_key_for

NO_RECORDING = "No such recording."


@require_GET
def voice_page(request: HttpRequest) -> HttpResponse:
    agents, reasons = available_agents()
    return render(request, "agents/voice.html", {
        "ready": len(agents) >= 2, "reasons": sorted(reasons.items()),
        "all_offline": bool(agents) and all(a.is_offline_demo for a in agents),
        "dimensions": [(key, key.capitalize()) for key in SUB_DIMENSIONS],
    })


@require_GET
def recording(request: HttpRequest, battle_id, label: str, side: str) -> HttpResponse:
    """One side (or both voices) of one finished call, only to the battle's owner."""
    wav = conversation_recording(battle_id=battle_id, label=label, side=side,
                                 session_key=session_key_for(request, create=False))
    if wav is None:  # for an audio element: the reason as text, not the site's 404 page
        return HttpResponseNotFound(NO_RECORDING, content_type="text/plain")
    response = HttpResponse(wav, content_type="audio/wav")
    response["Cache-Control"] = "private, no-store"
    return response

"""The offline voice agent, warmed before its first call.

Calls run in the web process (the proxy holds the agent: :mod:`agents.consumers`). Loaded on
first use, Whisper (about 1.5 s with its first run), the provider SDKs of the language models
(about 5 s) and the greeting's synthesis fell on the first call of each web process, while
the caller waited: on a fresh arena they heard the agent 11-15 s after speaking.
:func:`voice_warm_up` loads them all when the web process starts serving (the platform runs
it through the mode registry: ``agents.apps.AgentsConfig``, ``Mode.warm_up``), and
:func:`voice_warm` says whether that is done in this process.
"""

from __future__ import annotations

import logging
import threading
import time

from agents.adapters import local_voice
from agents.models import AgentConfiguration, Provider, Scenario
from agents.speech import stt, tts
from arena.llm import load_client

logger = logging.getLogger(__name__)

_warm = threading.Event()


def voice_warm() -> bool:
    """Whether this process has done its warm-up (:func:`voice_warm_up`): what it could not
    load is loaded on first use (nothing is loaded when Whisper or eSpeak NG is not
    installed, or no offline agent is active)."""
    return _warm.is_set()


def voice_warm_up() -> None:
    """Load Whisper and run it once, load the language models' client, and synthesize every
    scenario's greeting in every offline agent's voice (blocking: a few seconds, once)."""
    started = time.monotonic()
    try:
        problem = stt.stt_problem() or tts.tts_problem()
        if not problem and not _local_agents().exists():
            problem = "no offline agent is active"
        if problem:
            logger.info("the offline voice agent has nothing to warm up: %s", problem)
            return
        stt.warm_up()
        load_client()
        greetings = greetings_speak()
        logger.info("offline voice agent warm in %.1f s (Whisper, the model client, "
                    "%d greetings)", time.monotonic() - started, greetings)
    finally:
        _warm.set()


def _local_agents():  # noqa: ANN202 - a queryset
    return AgentConfiguration.objects.filter(active=True, provider=Provider.LOCAL)


def greetings_speak() -> int:
    """Every active scenario's first message in the voice of every active offline agent, kept
    (:func:`agents.speech.tts.spoken`) for the calls that open with it; how many."""
    voices = {local_voice(config) for config in _local_agents()}
    messages = [m for m in Scenario.objects.filter(active=True)
                .values_list("first_message", flat=True) if m]
    for message in messages:
        for voice, rate in voices:
            tts.spoken(message, voice=voice, rate=rate)
    return len(messages) * len(voices)

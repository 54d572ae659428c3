"""Helpers for voice tests: agents whose language model is the fake OpenAI server, a caller
who speaks with eSpeak NG into a paced microphone, and a socket client of the proxy."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field

import numpy as np
from channels.testing import WebsocketCommunicator
from django.conf import settings

from agents.library import library_load
from agents.models import AgentBattle, AgentConfiguration, Provider, Scenario
from agents.speech.audio import FRAME_BYTES, FRAME_MS, frames, silence
from testkit.registry import make_model
from testkit.waiting import ceiling

JUDGE_MARK = "You evaluate a phone call"
CALLER_LINE = "Hello, I would like to book a haircut for Tuesday at three. My name is John Smith."
AGENT_REPLY = "Sure, I have booked Tuesday at three for John Smith. Anything else?"


def judge_json(success: bool = True) -> str:
    return json.dumps({"task_success": success, "coherence": 0.9,
                       "instruction_following": 0.8, "hallucination_count": 0,
                       "reason": "The agent booked the slot and confirmed it."})


@dataclass
class VoiceScript:
    """The fake LLM: the judge's verdict for a judge prompt, else the agent's reply."""

    reply: str = AGENT_REPLY
    judge_success: bool = True
    heard: list[str] = field(default_factory=list)

    def __call__(self, rec) -> str:  # noqa: ANN001 - a recorded request
        text = "\n".join(m["content"] for m in rec.messages)
        if JUDGE_MARK in text:
            return judge_json(self.judge_success)
        users = [m["content"] for m in rec.messages if m["role"] == "user"]
        self.heard.append(users[-1] if users else "")
        return self.reply


def local_agents(server, slugs=("voice-one", "voice-two")) -> list[AgentConfiguration]:  # noqa: ANN001
    """Two active local cascade agents whose LLM is ``server``, and a third model on it that
    judges their calls (no agent judges its own); every other agent retired."""
    library_load()
    AgentConfiguration.objects.update(active=False)
    key_env = "" if server.api_key is None else server.api_key_env
    make_model(server, "voice-judge", api_key_env=key_env)
    configs = []
    for index, slug in enumerate(slugs):
        make_model(server, f"{slug}-llm", api_key_env=key_env)
        configs.append(AgentConfiguration.objects.create(
            slug=slug, name=f"Local {slug}", provider=Provider.LOCAL,
            components_json={"stt": "whisper-tiny.en", "llm": f"{slug}-llm", "tts": "espeak-ng"},
            config_json={"llm": f"{slug}-llm", "voice": "en-us" if index == 0 else "en-gb"}))
    return configs


def echo_agents() -> list[AgentConfiguration]:
    library_load()
    AgentConfiguration.objects.update(active=False)
    return [AgentConfiguration.objects.create(slug=f"echo-{label}", name=f"Echo {label}",
                                              provider=Provider.ECHO) for label in "ab"]


def make_battle(session_key: str, configs, *, scenario_slug: str = "haircut-appointment",
                **scenario_fields) -> AgentBattle:  # noqa: ANN001
    scenario = Scenario.objects.get(slug=scenario_slug)
    if scenario_fields:
        Scenario.objects.filter(pk=scenario.pk).update(**scenario_fields)
        scenario.refresh_from_db()
    return AgentBattle.objects.create(session_key=session_key, scenario=scenario,
                                      config_a=configs[0], config_b=configs[1])


def communicator(battle_id, label: str, key: str | None) -> WebsocketCommunicator:  # noqa: ANN001
    from arena.asgi import application

    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if key:
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={key}".encode()))
    return WebsocketCommunicator(application, f"/battles/{battle_id}/agent-stream?agent={label}",
                                 headers=headers)


def speech(text: str, voice: str = "en-us") -> bytes:
    """eSpeak NG speech with its leading and trailing silence trimmed."""
    from agents.speech.tts import synthesize

    samples = np.frombuffer(synthesize(text, voice=voice), dtype="<i2")
    loud = np.flatnonzero(np.abs(samples) > 300)
    return samples[loud[0]:loud[-1] + 1].tobytes()


class Microphone:
    """A caller's microphone: sends 20 ms frames in real time (as a browser does), silence
    between the lines it is given to say."""

    def __init__(self, client: WebsocketCommunicator) -> None:
        self.client = client
        self.lines: asyncio.Queue[bytes] = asyncio.Queue()
        self.sent_frames = 0
        self._task: asyncio.Task | None = None

    def say(self, pcm: bytes) -> None:
        self.lines.put_nowait(pcm)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        quiet = silence(FRAME_MS)
        while True:
            pending = [] if self.lines.empty() else list(frames(self.lines.get_nowait()))
            for frame in pending or [quiet]:
                assert len(frame) == FRAME_BYTES
                await self.client.send_to(bytes_data=frame)
                self.sent_frames += 1
                # The microphone's clock: frame n leaves at n × 20 ms.
                await asyncio.sleep(max(0.0, started + self.sent_frames * FRAME_MS / 1000
                                        - loop.time()))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


@dataclass
class Heard:
    """Everything the proxy sent the caller."""

    audio_frames: int = 0
    audio_bytes: int = 0
    events: list[dict] = field(default_factory=list)

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e.get("type") == kind]


async def listen_until(client: WebsocketCommunicator, heard: Heard, done, *,  # noqa: ANN001
                       timeout: float = 60.0) -> None:
    """Read what the proxy sends until ``done(heard)`` is true (fails after ``timeout``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + ceiling(timeout)
    while not done(heard):
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise AssertionError(f"the proxy never got there; events: {heard.events[-8:]}")
        try:
            message = await client.receive_output(timeout=remaining)
        except TimeoutError:
            raise AssertionError(f"the proxy never got there; events: {heard.events[-8:]}") \
                from None
        if message["type"] == "websocket.close":
            heard.events.append({"type": "closed", "code": message.get("code")})
            continue
        if message.get("bytes") is not None:
            heard.audio_frames += 1
            heard.audio_bytes += len(message["bytes"])
        elif message.get("text") is not None:
            event = json.loads(message["text"])
            event["_audio_frames_before"] = heard.audio_frames
            heard.events.append(event)


def record_call(battle: AgentBattle, label: str, *, caller_text: str = CALLER_LINE,
                agent_text: str = AGENT_REPLY, gap_ms: float = 800) -> None:
    """A finished call as the proxy saves it: both recordings on one clock, the agent
    answering ``gap_ms`` after the caller stopped, and the turns heard live with their
    timing, as the proxy measures it."""
    from agents import services
    from agents.models import recordings_dir
    from agents.speech.audio import seconds, write_wav

    conversation = services.conversation_open(battle_id=battle.pk, label=label,
                                              session_key=battle.session_key)
    caller, agent = speech(caller_text), speech(agent_text)
    lead, tail = silence(500), silence(500)
    caller_track = lead + caller + silence(gap_ms) + bytes(len(agent)) + tail
    agent_track = bytes(len(lead) + len(caller)) + silence(gap_ms) + agent + tail
    caller_ends = 500 + round(seconds(caller) * 1000)
    paths = [f"{battle.pk}/{label}-caller.wav", f"{battle.pk}/{label}-agent.wav"]
    for relative, pcm in zip(paths, (caller_track, agent_track), strict=True):
        write_wav(recordings_dir() / relative, pcm)
    services.conversation_close(
        conversation_id=conversation.pk, end_reason="caller ended the call",
        turns=[{"role": "user", "text": caller_text, "start_ms": 500, "end_ms": caller_ends,
                "latency_ms": None},
               {"role": "agent", "text": agent_text, "start_ms": caller_ends + round(gap_ms),
                "end_ms": caller_ends + round(gap_ms) + round(seconds(agent) * 1000),
                "latency_ms": float(gap_ms)}],
        tool_calls=[], duration_seconds=len(caller_track) / 32000,
        user_audio_path=paths[0], agent_audio_path=paths[1])

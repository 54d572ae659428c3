"""A fake Retell: its REST API (``/create-retell-llm``, ``/create-agent``,
``/v2/create-web-call``, ``/v2/stop-call/{id}``, ``/v2/get-call/{id}``, ``/list-voices``)
checking the bearer key, and :class:`FakeMediaLeg`, the room's side of a web call: it
replays what Retell's agent does in its LiveKit room (the ``agent_audio`` track as 16 kHz
PCM, the ``update`` / ``agent_start_talking`` / ``agent_stop_talking`` packets, leaving).

No LiveKit server can run here, so the leg learns its call from the fake's
``/fake-livekit/rooms/{access_token}`` (the token is all a real room is joined with) and
reports the caller's audio back when it leaves: the fake and the leg may live in different
processes (a test's and daphne's). Point ``RETELL_LIVEKIT_URL`` at ``fake.livekit_url`` and
``ARENA_RETELL_MEDIA_LEG`` at ``agents.tests.fakes.FakeMediaLeg``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import secrets
import uuid
from typing import Any

import httpx

from agents.adapters.media import Left, MediaJoinError, MediaLeg, Packet
from agents.tests.fakes.agent import AgentScript, ScriptedAgent, Voice
from agents.tests.fakes.rest import FakeREST

_VARIABLE = re.compile(r"\{\{\s*(\w+)\s*\}\}")


class FakeRetell(FakeREST):
    name = "retell"

    def __init__(self) -> None:
        super().__init__()
        self.script = AgentScript()
        self.llms: dict[str, dict] = {}
        self.agents: dict[str, dict] = {}
        self.calls: dict[str, dict[str, Any]] = {}
        self.rooms: dict[str, str] = {}  # access token → call id
        self.route("POST", "/create-retell-llm", self._create_llm)
        self.route("POST", "/create-agent", self._create_agent)
        self.route("POST", "/v2/create-web-call", self._create_call)
        self.route("POST", "/v2/stop-call/(?P<id>[^/]+)", self._stop)
        self.route("GET", "/v2/get-call/(?P<id>[^/]+)", self._get)
        self.route("GET", "/list-voices", lambda body, m: (200, []))
        self.route("GET", "/fake-livekit/rooms/(?P<token>[^/]+)", self._room)
        self.route("POST", "/fake-livekit/rooms/(?P<token>[^/]+)/left", self._left)

    @property
    def livekit_url(self) -> str:
        return f"{self.base_url}/fake-livekit"

    def _create_llm(self, body: dict, match) -> tuple[int, Any]:  # noqa: ANN001
        if not body.get("general_prompt") or not body.get("model"):
            return 400, {"error": "general_prompt and model are required"}
        llm_id = f"llm_{uuid.uuid4().hex[:20]}"
        self.llms[llm_id] = body
        return 201, {"llm_id": llm_id, "version": 0, **body}

    def _create_agent(self, body: dict, match) -> tuple[int, Any]:  # noqa: ANN001
        engine = body.get("response_engine") or {}
        if engine.get("type") != "retell-llm" or engine.get("llm_id") not in self.llms:
            return 400, {"error": "response_engine must name a Retell LLM"}
        if not body.get("voice_id"):
            return 400, {"error": "voice_id is required"}
        agent_id = f"agent_{uuid.uuid4().hex[:20]}"
        self.agents[agent_id] = body
        return 201, {"agent_id": agent_id, "version": 0, **body}

    def _create_call(self, body: dict, match) -> tuple[int, Any]:  # noqa: ANN001
        agent = self.agents.get(body.get("agent_id"))
        if agent is None:
            return 404, {"error": "Agent not found"}
        variables = body.get("retell_llm_dynamic_variables") or {}
        if not all(isinstance(v, str) for v in variables.values()):
            return 400, {"error": "dynamic variables must be strings"}
        llm = self.llms[agent["response_engine"]["llm_id"]]
        call_id, token = f"call_{uuid.uuid4().hex[:20]}", secrets.token_urlsafe(24)
        greeting = _VARIABLE.sub(lambda m: variables.get(m[1], ""), llm.get("begin_message", ""))
        self.calls[call_id] = {"body": body, "status": "registered", "reason": "",
                               "greeting": greeting, "caller_bytes": 0, "stopped": False}
        self.rooms[token] = call_id
        return 201, {"call_type": "web_call", "access_token": token, "call_id": call_id,
                     "agent_id": body["agent_id"], "agent_version": 0,
                     "call_status": "registered", "retell_llm_dynamic_variables": variables}

    def _stop(self, body: dict, match) -> tuple[int, Any]:  # noqa: ANN001
        call = self.calls.get(match["id"])
        if call is None:
            return 404, {"error": "Call not found"}
        call["stopped"] = True
        if call["status"] != "ended":
            call["status"], call["reason"] = "ended", "user_hangup"
        return 200, {}

    def _get(self, body: dict, match) -> tuple[int, Any]:  # noqa: ANN001
        call = self.calls.get(match["id"])
        if call is None:
            return 404, {"error": "Call not found"}
        values = self.script.turn_latencies_ms
        summary = {"p50": sorted(values)[len(values) // 2], "max": max(values),
                   "min": min(values), "num": len(values), "values": values}
        return 200, {"call_id": match["id"], "call_type": "web_call",
                     "call_status": call["status"], "disconnection_reason": call["reason"],
                     "latency": {"e2e": summary, "llm": {"p50": 420.0}, "tts": {"p50": 180.0}},
                     "transcript_object": []}

    def _room(self, body: dict, match) -> tuple[int, Any]:  # noqa: ANN001
        call_id = self.rooms.get(match["token"])
        if call_id is None:
            return 404, {"error": "No room for this token"}
        self.calls[call_id]["status"] = "ongoing"
        return 200, {"greeting": self.calls[call_id]["greeting"],
                     "script": dataclasses.asdict(self.script)}

    def _left(self, body: dict, match) -> tuple[int, Any]:  # noqa: ANN001
        call = self.calls[self.rooms[match["token"]]]
        call["caller_bytes"] += int(body.get("caller_bytes", 0))
        if body.get("agent_left") and call["status"] != "ended":
            call["status"], call["reason"] = "ended", "agent_hangup"
        return 200, {}


class FakeMediaLeg(MediaLeg):
    """The room as the caller's side sees it; every leg made is kept in ``legs``."""

    legs: list[FakeMediaLeg] = []

    def __init__(self) -> None:
        super().__init__()
        self.url = self.token = ""
        self.agent: ScriptedAgent | None = None
        self._run: asyncio.Task | None = None
        self.agent_left = False
        FakeMediaLeg.legs.append(self)

    async def join(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        try:
            async with httpx.AsyncClient(timeout=10) as client:
                answer = await client.get(f"{url}/rooms/{token}")
        except httpx.HTTPError as exc:
            raise MediaJoinError(f"fake room not reached: {type(exc).__name__}") from exc
        if answer.status_code != 200:
            raise MediaJoinError(f"fake room refused the token: HTTP {answer.status_code}")
        room = answer.json()
        self.agent = ScriptedAgent(greeting=room["greeting"],
                                   script=AgentScript(**room["script"]), voice=_RoomVoice(self))
        self._run = asyncio.create_task(self.agent.run())

    async def send(self, pcm: bytes) -> None:
        if self.agent is not None and not self.closed:
            self.agent.feed(pcm)

    async def leave(self) -> None:
        if self._run is not None:
            self._run.cancel()
        self.closed = True
        if self.agent is not None:
            with contextlib.suppress(httpx.HTTPError):
                async with httpx.AsyncClient(timeout=10) as client:
                    await client.post(f"{self.url}/rooms/{self.token}/left", json={
                        "caller_bytes": self.agent.caller_bytes, "agent_left": self.agent_left})
            self.agent = None


class _RoomVoice(Voice):
    def __init__(self, leg: FakeMediaLeg) -> None:
        self.leg = leg
        self.utterances: list[dict[str, str]] = []
        self.open = False
        self.stopping = False

    async def audio(self, pcm: bytes) -> None:
        self.leg.put(pcm)

    async def speech(self, started: bool) -> None:
        # Retell's transcript of what the agent said is complete when it stops talking: the
        # stop is sent after the last words' update.
        if started:
            self.leg.put(Packet({"event_type": "agent_start_talking"}))
        else:
            self.stopping = True

    async def transcript(self, role: str, text: str, final: bool) -> None:
        if self.open and self.utterances[-1]["role"] == role:
            self.utterances[-1]["content"] = text
        else:
            self.utterances.append({"role": role, "content": text})
        self.open = not final
        self.leg.put(Packet({"event_type": "update",
                             "transcript": [dict(u) for u in self.utterances[-5:]],
                             "turntaking": "agent_turn" if role == "agent" else "user_turn"}))
        if final and role == "agent" and self.stopping:
            self.stopping = False
            self.leg.put(Packet({"event_type": "agent_stop_talking"}))

    async def fault(self, kind: str) -> None:
        if kind in ("drop", "error"):
            self.leg.put(Left(dropped=True))

    async def hang_up(self) -> None:
        self.leg.agent_left = True
        self.leg.put(Left(dropped=False))

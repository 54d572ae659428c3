"""A fake Vapi: ``POST /call`` (a ``vapi.websocket`` call, 201 with its
``transport.websocketCallUrl``), ``GET /call/{id}`` (the call with its ``artifact``'s
``performanceMetrics``), ``GET /assistant`` (the ping), and the transport WebSocket: raw
16 kHz PCM both ways, Vapi's client messages as JSON text frames (``status-update``,
``speech-update``, ``transcript``, ``conversation-update``, ``tool-calls``, ``model-output``,
``hang``), ``{"type": "end-call"}`` honoured, and the call ended with ``silence-timed-out``
when no audio arrives for ``silence_timeout`` seconds. Both check the bearer key.

Usage::

    with FakeVapi() as vapi:             # vapi.base_url, vapi.api_key
        vapi.script.fault = "drop"       # see AgentScript
        vapi.fail("/call", 500)          # the next POST /call answers 500
        vapi.calls[call_id]              # body, status, control messages, caller audio
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import uuid
from typing import Any

from agents.tests.fakes.agent import AgentScript, ScriptedAgent, Voice
from agents.tests.fakes.rest import FakeREST

AUDIO_FORMAT = {"format": "pcm_s16le", "container": "raw", "sampleRate": 16000}
# The fake is the provider, not the arena: its own DEBUG lines (the request headers it
# received, the key among them) are not what the tests' "never logged" checks are about.
_quiet = logging.getLogger("agents.tests.fakes.vapi.server")
_quiet.setLevel(logging.WARNING)


class FakeVapi(FakeREST):
    name = "vapi"

    def __init__(self, *, silence_timeout: float = 3.0) -> None:
        super().__init__()
        self.script = AgentScript()
        self.silence_timeout = silence_timeout
        self.calls: dict[str, dict[str, Any]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ws_server = None
        self.route("POST", "/call", self._create)
        self.route("GET", "/call/(?P<id>[^/]+)", self._get)
        self.route("GET", "/assistant", lambda body, m: (200, []))

    # -- REST -----------------------------------------------------------------------------

    def _create(self, body: dict, match) -> tuple[int, Any]:  # noqa: ANN001
        transport = body.get("transport") or {}
        assistant = body.get("assistant") or {}
        if transport.get("provider") != "vapi.websocket" or \
                transport.get("audioFormat") != AUDIO_FORMAT:
            return 400, {"message": ["transport must be vapi.websocket, pcm_s16le raw 16 kHz"]}
        if not (assistant.get("model") or {}).get("model") or "phoneNumberId" in body:
            return 400, {"message": ["assistant.model.model is required"]}
        call_id = str(uuid.uuid4())
        variables = (body.get("assistantOverrides") or {}).get("variableValues") or {}
        self.calls[call_id] = {"body": body, "status": "queued", "ended_reason": "",
                               "control": [], "caller_bytes": 0, "variables": variables}
        url = f"ws://127.0.0.1:{self._ws_port}/{call_id}/transport"
        return 201, {"id": call_id, "type": "vapi.websocketCall", "status": "queued",
                     "orgId": "org-fake", "cost": 0, "createdAt": "2026-11-24T00:00:00Z",
                     "transport": {"provider": "vapi.websocket", "websocketCallUrl": url}}

    def _get(self, body: dict, match) -> tuple[int, Any]:  # noqa: ANN001
        call = self.calls.get(match["id"])
        if call is None:
            return 404, {"message": "Call not found."}
        turns = [{"modelLatency": 300.0, "voiceLatency": 200.0, "transcriberLatency": 150.0,
                  "endpointingLatency": ms - 650.0, "turnLatency": ms}
                 for ms in self.script.turn_latencies_ms]
        return 200, {"id": match["id"], "status": call["status"],
                     "endedReason": call["ended_reason"], "cost": 0.042,
                     "artifact": {"performanceMetrics": {
                         "turnLatencies": turns, "modelLatencyAverage": 300.0,
                         "voiceLatencyAverage": 200.0, "transcriberLatencyAverage": 150.0}}}

    # -- the transport ----------------------------------------------------------------------

    @property
    def _ws_port(self) -> int:
        return self._ws_server.sockets[0].getsockname()[1]

    def start(self) -> FakeVapi:
        super().start()
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        async def serve() -> None:
            from websockets.asyncio.server import serve as ws_serve

            self._ws_server = await ws_serve(self._session, "127.0.0.1", 0,
                                             process_request=self._admit, max_size=2 ** 22,
                                             logger=_quiet)
            ready.set()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(serve())
            self._loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            async def close() -> None:
                self._ws_server.close()
                await self._ws_server.wait_closed()

            asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        super().stop()

    def _admit(self, connection, request):  # noqa: ANN001, ANN202
        parts = request.path.strip("/").split("/")
        if not self.authorised(request.headers):
            return connection.respond(401, "Invalid key\n")
        if len(parts) != 2 or parts[1] != "transport" or parts[0] not in self.calls:
            return connection.respond(404, "No such call\n")
        return None

    async def _session(self, socket) -> None:  # noqa: ANN001
        call_id = socket.request.path.strip("/").split("/")[0]
        call = self.calls[call_id]
        call["status"] = "in-progress"
        voice = _VapiVoice(socket, call)
        variables = call["variables"]
        agent = ScriptedAgent(greeting=variables.get("first_message", "Hello."),
                              script=self.script, voice=voice)
        await voice.send({"type": "status-update", "status": "in-progress"})
        talking = asyncio.create_task(agent.run())
        watchdog = asyncio.create_task(self._silence_watch(voice, agent))
        try:
            async for message in socket:
                if isinstance(message, bytes):
                    agent.feed(message)
                    call["caller_bytes"] += len(message)
                    voice.last_audio = asyncio.get_running_loop().time()
                    continue
                control = json.loads(message)
                call["control"].append(control)
                if control.get("type") == "end-call":
                    await voice.end("customer-ended-call")
        except Exception:  # noqa: BLE001 - the caller's side went away
            pass
        finally:
            talking.cancel()
            watchdog.cancel()
            if call["status"] != "ended":
                call["status"], call["ended_reason"] = "ended", "customer-ended-call"

    async def _silence_watch(self, voice: _VapiVoice, agent: ScriptedAgent) -> None:
        loop = asyncio.get_running_loop()
        voice.last_audio = loop.time()
        while True:
            await asyncio.sleep(0.1)
            if loop.time() - voice.last_audio > self.silence_timeout:
                await voice.end("silence-timed-out")
                return


class _VapiVoice(Voice):
    def __init__(self, socket, call: dict) -> None:  # noqa: ANN001
        self.socket = socket
        self.call = call
        self.turn = 0
        self.last_audio = 0.0
        self.history: list[dict] = []

    async def send(self, message: dict | bytes) -> None:
        from websockets.exceptions import ConnectionClosed

        with contextlib.suppress(ConnectionClosed):
            await self.socket.send(message if isinstance(message, bytes) else json.dumps(message))

    async def audio(self, pcm: bytes) -> None:
        await self.send(pcm)

    async def speech(self, started: bool) -> None:
        await self.send({"type": "speech-update", "status": "started" if started else "stopped",
                         "role": "assistant", "turn": self.turn})
        if not started:
            self.turn += 1

    async def transcript(self, role: str, text: str, final: bool) -> None:
        vapi_role = "assistant" if role == "agent" else "user"
        await self.send({"type": "transcript", "role": vapi_role,
                         "transcriptType": "final" if final else "partial", "transcript": text})
        if final:
            self.history.append({"role": "bot" if role == "agent" else "user", "message": text})
            await self.send({"type": "conversation-update", "messages": self.history,
                             "messagesOpenAIFormatted": []})

    async def tool_call(self, name: str, arguments: dict) -> None:
        call = {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)}}
        await self.send({"type": "tool-calls", "toolCallList": [call],
                         "toolWithToolCallList": [{"type": "function", "toolCall": call}]})

    async def token(self, text: str) -> None:
        await self.send({"type": "model-output", "output": text, "turnId": str(self.turn)})

    async def fault(self, kind: str) -> None:
        if kind == "drop":
            self.socket.transport.abort()  # no close frame: the line just dies
        elif kind == "error":
            await self.end("pipeline-error-openai-llm-failed")
        elif kind == "silence":
            await self.end("silence-timed-out")
        elif kind == "stall":
            await self.send({"type": "hang"})

    async def hang_up(self) -> None:
        await self.end("assistant-ended-call")

    async def end(self, reason: str) -> None:
        if self.call["status"] == "ended":
            return
        self.call["status"], self.call["ended_reason"] = "ended", reason
        await self.send({"type": "status-update", "status": "ended", "endedReason": reason})
        await self.socket.close()

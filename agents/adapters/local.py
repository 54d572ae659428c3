"""The offline demo agent: a cascade of local parts behind the adapter interface.

Caller audio → Silero VAD decides when the caller's turn ends → Whisper tiny.en writes what
they said → the scenario's simulated tools answer with their canned results when the
caller's words call for them → a local LLM (through :mod:`arena.llm`) replies, streamed, and
each finished sentence is spoken by eSpeak NG at once → 16 kHz PCM paced in real time
(a few frames ahead, for the network). When the caller starts talking over the agent, its
audio stops (barge-in).

What is slow to load is loaded when the web process starts (:mod:`agents.warmup`), the
greeting's audio included; a call that comes before that loads it off the loop. While the
greeting plays, a model on this machine reads the call's instructions and greeting
(:meth:`LocalCascadeAdapter._prefill`), so the first reply does not wait for that reading.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
from collections import deque

from agents.adapters.base import (
    AgentAdapter,
    AgentStatus,
    AgentUnavailable,
    AudioChunk,
    ToolCallEvent,
    TranscriptUpdate,
)
from agents.speech.audio import FRAME_MS, frames
from agents.speech.stt import stt_problem, transcribe, warm_up
from agents.speech.tts import kept, spoken, synthesize, tts_problem
from agents.speech.vad import Endpointer
from arena.llm import LLMError, load_client

VOICE_RULES = (
    "You are on a phone call and everything you write is read aloud. Reply in one or two "
    "short sentences, with no lists, markdown or emoji."
)
REPLY_TOKENS = 80
HISTORY_MESSAGES = 12
LEAD_FRAMES = 3  # sent ahead of real time, so network jitter never starves the player
PREROLL_FRAMES = 15  # 300 ms kept before the caller's speech is detected
# A pause this long starts transcribing what was said: if the turn then ends (600 ms of
# silence), the words are ready; if the caller goes on, the guess is dropped.
GUESS_AFTER_MS = 200
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
CLAUSE_END = re.compile(r"(?<=[.!?,;:])\s+")
FIRST_PIECE_WORDS = 3
MODEL_FAILED = "The agent's language model failed: {reason}"
logger = logging.getLogger(__name__)


def ready_pieces(text: str, *, first: bool) -> tuple[list[str], str]:
    """The pieces of a streamed reply ready to be spoken, and what is left to wait for: whole
    sentences, and for the reply's first piece already its first clause of a few words, so
    the caller hears the answer begin while the model writes the rest of that sentence."""
    if first:
        for match in CLAUSE_END.finditer(text):
            head = text[:match.start()]
            if len(head.split()) >= FIRST_PIECE_WORDS:
                rest, more = ready_pieces(text[match.end():], first=False)
                return [head, *rest], more
        return [], text
    *sentences, rest = SENTENCE_END.split(text)
    return sentences, rest


@dataclasses.dataclass(frozen=True)
class Brief:
    """What an agent is told about the scenario (the same for every agent of a battle)."""

    system_prompt: str
    first_message: str
    tools: list[dict]


class LocalCascadeAdapter(AgentAdapter):
    def __init__(self, *, brief: Brief, endpoint, voice: str = "en-us",  # noqa: ANN001
                 rate: int = 170) -> None:
        super().__init__()
        self.brief = brief
        self.endpoint = endpoint
        self.voice = voice
        self.rate = rate
        self.history: list[dict] = []
        self._called: set[str] = set()
        self._endpointer = None
        self._utterance = bytearray()
        self._preroll: deque[bytes] = deque(maxlen=PREROLL_FRAMES)
        self._reply: asyncio.Task | None = None
        self._speech: asyncio.Queue[str | None] | None = None
        self._speaker: asyncio.Task | None = None
        self._play_until = 0.0
        self._speaking = False
        self._warming: asyncio.Future | None = None
        self._prefilled: asyncio.Task | None = None
        # A transcription started during the caller's pause: (bytes of the utterance it
        # read, the task), dropped when the caller speaks again.
        self._guess: tuple[int, asyncio.Future] | None = None

    async def start(self) -> None:
        problem = await asyncio.to_thread(lambda: stt_problem() or tts_problem())
        if problem:
            raise AgentUnavailable(problem)

        # In a web process that is not warm yet (agents.warmup), Whisper and the provider
        # SDKs load while the greeting plays, off the loop: every call of the process shares
        # the loop. Once loaded, this is done at once.
        def warm() -> None:
            warm_up()
            load_client()

        self._warming = asyncio.ensure_future(asyncio.to_thread(warm))
        self._endpointer = Endpointer()
        greeting = self.brief.first_message
        if greeting:
            self.history.append({"role": "assistant", "content": greeting})
            self.emit(TranscriptUpdate("agent", greeting))
            self._say(kept(greeting, voice=self.voice, rate=self.rate)
                      or await asyncio.to_thread(spoken, greeting, voice=self.voice,
                                                 rate=self.rate))
            self._say(None)
        if self.endpoint.local_key:
            self._prefilled = asyncio.create_task(self._prefill())

    async def send_audio(self, pcm: bytes) -> None:
        if self.ended is not None or self._endpointer is None:
            return
        events = self._endpointer.feed(pcm)
        if "start" in events:
            self._barge_in()
            self._utterance = bytearray(b"".join(self._preroll))
            self._preroll.clear()
        if self._endpointer.speaking or "end" in events:
            self._utterance.extend(pcm)
        else:
            self._preroll.append(pcm)
        self._guess_on_pause()
        if "end" in events:
            heard, self._utterance = bytes(self._utterance), bytearray()
            guess, self._guess = self._guess, None
            self._reply = asyncio.create_task(self._answer(heard, guess and guess[1]))

    def _guess_on_pause(self) -> None:
        """Start transcribing at a pause (:data:`GUESS_AFTER_MS`), so that the words are
        ready when the turn ends; a guess made before the caller spoke again is dropped."""
        endpointer = self._endpointer
        if not endpointer.speaking:
            return
        if endpointer.quiet_ms == 0:
            self._guess = None  # speaking: a guess read less than will be said
        elif endpointer.quiet_ms >= GUESS_AFTER_MS and self._guess is None and (
                self._warming is None or self._warming.done()):
            heard = bytes(self._utterance)
            self._guess = (len(heard), asyncio.ensure_future(
                asyncio.to_thread(transcribe, heard)))

    async def end(self) -> None:
        for task in (self._reply, self._speaker, self._prefilled):
            if task is not None:
                task.cancel()
        self.finish("caller ended the call")

    # -- speaking -----------------------------------------------------------------------

    def _say(self, sentence: str | bytes | None) -> None:
        """Queue a sentence, or its audio, for the speaker task (``None``: the reply is
        complete)."""
        if self._speaker is None or self._speaker.done():
            self._speech = asyncio.Queue()
            self._speaker = asyncio.create_task(self._speak_queue(self._speech))
        self._speech.put_nowait(sentence)

    async def _speak_queue(self, queue: asyncio.Queue[str | bytes | None]) -> None:
        """Speak queued sentences back to back, paced in real time; after ``None``, wait
        for the audio to play out and say the agent listens again."""
        loop = asyncio.get_running_loop()
        while True:
            sentence = await queue.get()
            if sentence is None:
                if self._speaking:
                    await asyncio.sleep(max(0.0, self._play_until - loop.time()))
                    self._speaking = False
                    self.emit(AgentStatus("listening"))
                continue
            pcm = sentence if isinstance(sentence, bytes) else await asyncio.to_thread(
                synthesize, sentence, voice=self.voice, rate=self.rate)
            if not self._speaking:
                self._speaking = True
                self.emit(AgentStatus("speaking"))
                self._play_until = loop.time()
            for frame in frames(pcm):
                ahead = self._play_until - loop.time() - LEAD_FRAMES * FRAME_MS / 1000
                if ahead > 0:
                    await asyncio.sleep(ahead)
                self.emit(AudioChunk(frame))
                self._play_until = max(self._play_until, loop.time()) + FRAME_MS / 1000

    def _barge_in(self) -> None:
        """The caller started talking: stop the agent's reply and its audio."""
        busy = self._speaking or (self._reply is not None and not self._reply.done())
        for task in (self._reply, self._speaker):
            if task is not None:
                task.cancel()
        self._speaker = None
        self._speaking = False
        if busy:
            self.emit(AgentStatus("interrupted"))

    # -- thinking -----------------------------------------------------------------------

    async def _prefill(self) -> None:
        """Have the model on this machine read the call's instructions and greeting now, while
        they play: llama.cpp keeps what a slot has read, and a prompt that begins the same
        way is read from where they end. The first reply then waits for the caller's words
        alone, not for the couple of hundred tokens before them (1.5 s for SmolLM2 and 3-5 s
        for Qwen 0.5B on this 2-core machine). A hosted model gains nothing: none is asked."""
        await asyncio.wait([self._warming])
        if self._warming.cancelled() or self._warming.exception() is not None:
            return  # the reply says what failed
        from arena.llm import complete_chat  # noqa: PLC0415 - provider SDKs, after the warm-up

        endpoint = dataclasses.replace(self.endpoint, system_prompt=self._system_prompt(),
                                       max_tokens=1)
        try:
            await complete_chat(endpoint, self.history or [{"role": "user", "content": ""}])
        except LLMError as exc:  # the reply asks again, and says what failed
            logger.info("the local agent's model did not read ahead: %s", exc.user_message)

    async def _answer(self, heard: bytes, guess: asyncio.Future | None = None) -> None:
        self.emit(AgentStatus("thinking"))  # at once: the badge never waits on the warm-up
        if self._warming is not None:
            await asyncio.wait([self._warming])  # a failed warm-up fails where it is used
        if self._prefilled is not None:  # reading the same beginning again would be slower
            await asyncio.wait([self._prefilled])
        from arena.llm import stream_chat  # noqa: PLC0415 - provider SDKs, after the warm-up

        # The pause's guess read the same words (only silence came after it).
        text = await guess if guess is not None else await asyncio.to_thread(transcribe, heard)
        if not text:
            self.emit(AgentStatus("listening"))
            return
        self.emit(TranscriptUpdate("user", text))
        results = self._use_tools(text)
        if results:
            text = f"{text}\n\n(Results from your tools:\n" + "\n".join(results) + ")"
        self.history.append({"role": "user", "content": text})
        pending = ""
        spoken: list[str] = []

        def on_delta(delta: str) -> None:
            nonlocal pending
            pending += delta
            sentences, pending = ready_pieces(pending, first=not spoken)
            for sentence in sentences:
                if sentence.strip():
                    spoken.append(sentence.strip())
                    self._say(sentence.strip())

        def on_restart() -> None:
            nonlocal pending
            pending = ""

        endpoint = dataclasses.replace(self.endpoint, system_prompt=self._system_prompt(),
                                       max_tokens=REPLY_TOKENS)
        try:
            await stream_chat(endpoint, self.history[-HISTORY_MESSAGES:], on_delta=on_delta,
                              on_restart=on_restart)
        except LLMError as exc:  # said before the vote: the same words for either agent
            logger.warning("the local agent's model failed: %s", exc.user_message)
            self.finish("the agent failed", MODEL_FAILED.format(reason=exc.blind_message))
            return
        if pending.strip():
            spoken.append(pending.strip())
            self._say(pending.strip())
        self._say(None)
        reply = " ".join(spoken)
        self.history.append({"role": "assistant", "content": reply})
        self.emit(TranscriptUpdate("agent", reply))

    def _use_tools(self, text: str) -> list[str]:
        """Call the tools the caller's words call for (each once): their results, for the
        caller's turn. They follow the words rather than join the instructions, so that the
        conversation only grows at its end: changed instructions made the model read it all
        again (3 s of a reply with Qwen 0.5B here)."""
        words = text.lower()
        results = []
        for tool in self.brief.tools:
            name = tool.get("name", "")
            triggers = [str(t).lower() for t in tool.get("triggers", [])]
            if name in self._called or not any(t in words for t in triggers):
                continue
            self._called.add(name)
            result = tool.get("result")
            results.append(f"{name}: {json.dumps(result)}")
            self.emit(ToolCallEvent(name, {"caller_said": text}, result))
        return results

    def _system_prompt(self) -> str:
        return f"{self.brief.system_prompt}\n\n{VOICE_RULES}"

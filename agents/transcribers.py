"""Who writes the transcripts of the recordings: the local Whisper by default, OpenAI's
transcription API when ``ARENA_VOICE_TRANSCRIBER`` says ``openai`` (or ``auto`` and
``OPENAI_API_KEY`` is set). Every provider's calls are transcribed the same way, so the
judge reads like for like."""

from __future__ import annotations

import io
import os

import httpx
from django.conf import settings

from agents.speech.audio import write_wav
from agents.speech.stt import TranscriptionUnavailable, transcribe


class TranscriberFailed(Exception):
    """The message is safe to show."""


class LocalWhisper:
    name = "whisper-tiny.en (local)"

    def transcribe(self, pcm: bytes) -> str:
        try:
            return transcribe(pcm)
        except TranscriptionUnavailable as exc:
            raise TranscriberFailed(str(exc)) from exc


class OpenAITranscriber:
    def __init__(self, *, base_url: str, api_key: str, model: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.name = f"{model} (OpenAI)"

    def transcribe(self, pcm: bytes) -> str:
        buffer = io.BytesIO()
        write_wav(buffer, pcm)
        try:
            response = httpx.post(
                f"{self.base_url}/audio/transcriptions",
                headers={"Authorization": f"Bearer {self.api_key}"},
                data={"model": self.model, "response_format": "json", "language": "en"},
                files={"file": ("speech.wav", buffer.getvalue(), "audio/wav")},
                timeout=60.0)
        except httpx.HTTPError as exc:
            raise TranscriberFailed(f"OpenAI transcription unreachable ({type(exc).__name__})") \
                from None
        if response.status_code != 200:
            raise TranscriberFailed(f"OpenAI transcription answered {response.status_code}")
        try:
            text = response.json()["text"]
        except (ValueError, KeyError, TypeError):
            raise TranscriberFailed("OpenAI transcription answered without a text") from None
        if not isinstance(text, str):
            raise TranscriberFailed("OpenAI transcription answered without a text")
        return text.strip()


def transcriber() -> LocalWhisper | OpenAITranscriber:
    choice = settings.ARENA_VOICE_TRANSCRIBER
    key = os.environ.get("OPENAI_API_KEY", "")
    if choice == "openai" or (choice == "auto" and key):
        if not key:
            raise TranscriberFailed("ARENA_VOICE_TRANSCRIBER is openai but OPENAI_API_KEY is "
                                    "not set.")
        return OpenAITranscriber(base_url=settings.ARENA_VOICE_OPENAI_BASE_URL, api_key=key,
                                 model=settings.ARENA_VOICE_OPENAI_TRANSCRIBE_MODEL)
    return LocalWhisper()

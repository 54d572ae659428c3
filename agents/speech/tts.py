"""Text to speech with eSpeak NG from the ``espeakng-loader`` wheel (the library and its data
ship in it), through the library's C API, resampled to 16 kHz.

eSpeak keeps global state, so one synthesis runs at a time per process (a lock); a sentence
takes a few milliseconds. What every call says the same way (a scenario's greeting) is
synthesized once per process and kept (:func:`spoken`, :func:`kept`).
"""

from __future__ import annotations

import ctypes
import functools
import threading

import numpy as np
import soxr

from agents.speech.audio import SAMPLE_RATE

AUDIO_OUTPUT_SYNCHRONOUS = 2
CHARS_UTF8 = 1
PARAM_RATE = 1
MAX_CHARACTERS = 2_000
DEFAULT_VOICE = "en-us"
DEFAULT_RATE = 170  # words per minute
MAX_KEPT = 256  # kept sentences: every scenario's greeting in every local agent's voice

_lock = threading.Lock()
_collected: list[bytes] = []
_kept: dict[tuple[str, str, int], bytes] = {}
_CALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                                  ctypes.c_void_p)


class SpeechUnavailable(RuntimeError):
    pass


@_CALLBACK_TYPE
def _collect(wav, samples, _events):
    if samples > 0:
        _collected.append(ctypes.string_at(wav, samples * 2))
    return 0


@functools.cache
def _engine() -> tuple[ctypes.CDLL, int]:
    try:
        import espeakng_loader  # noqa: PLC0415 - optional (embedded extra): absent, said why
    except ImportError as exc:
        raise SpeechUnavailable("eSpeak NG is not installed (the espeakng-loader wheel).") from exc
    try:
        library = ctypes.CDLL(espeakng_loader.get_library_path())
        data = espeakng_loader.get_data_path()
    except (OSError, RuntimeError) as exc:
        raise SpeechUnavailable(f"eSpeak NG could not be loaded: {exc}") from exc
    library.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                          ctypes.c_int]
    library.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint,
                                     ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                     ctypes.c_void_p, ctypes.c_void_p]
    library.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
    rate = library.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, data.encode(), 0)
    if rate <= 0:
        raise SpeechUnavailable("eSpeak NG failed to start (its data folder is unreadable).")
    library.espeak_SetSynthCallback(_collect)
    return library, rate


def tts_problem() -> str | None:
    """Why speech cannot be synthesised here, or ``None``."""
    try:
        with _lock:
            _engine()
    except SpeechUnavailable as exc:
        return str(exc)
    return None


def synthesize(text: str, *, voice: str = DEFAULT_VOICE, rate: int = DEFAULT_RATE) -> bytes:
    """16 kHz 16-bit mono PCM of ``text`` spoken by eSpeak NG."""
    text = " ".join(text.split())[:MAX_CHARACTERS]
    if not text:
        return b""
    with _lock:
        library, native_rate = _engine()
        if library.espeak_SetVoiceByName(voice.encode()) != 0:
            library.espeak_SetVoiceByName(DEFAULT_VOICE.encode())
        library.espeak_SetParameter(PARAM_RATE, int(rate), 0)
        _collected.clear()
        encoded = text.encode()
        library.espeak_Synth(encoded, len(encoded) + 1, 0, 0, 0, CHARS_UTF8, None, None)
        library.espeak_Synchronize()
        native = np.frombuffer(b"".join(_collected), dtype=np.int16)
        _collected.clear()
    if not len(native):
        return b""
    resampled = soxr.resample(native, native_rate, SAMPLE_RATE)
    return np.clip(resampled, -32768, 32767).astype("<i2").tobytes()


def spoken(text: str, *, voice: str = DEFAULT_VOICE, rate: int = DEFAULT_RATE) -> bytes:
    """:func:`synthesize`, kept for the next time the same words are said in the same voice."""
    key = (text, voice, int(rate))
    pcm = _kept.get(key)
    if pcm is None:
        pcm = synthesize(text, voice=voice, rate=rate)
        if len(_kept) >= MAX_KEPT:
            _kept.clear()
        _kept[key] = pcm
    return pcm


def kept(text: str, *, voice: str = DEFAULT_VOICE, rate: int = DEFAULT_RATE) -> bytes | None:
    """The audio :func:`spoken` keeps for these words, or ``None`` (not said yet)."""
    return _kept.get((text, voice, int(rate)))

"""The offline speech parts of the local voice agent and of the evaluation: 16 kHz PCM helpers
and recordings (:mod:`.audio`), voice activity (:mod:`.vad`, Silero), speech to text
(:mod:`.stt`, Whisper tiny.en through faster-whisper) and text to speech (:mod:`.tts`,
eSpeak NG). Each loads its model on first use and says why when it cannot."""

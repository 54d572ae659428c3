import pytest


@pytest.fixture(autouse=True)
def voice_media(settings, tmp_path):
    """Each test records its calls in its own folder."""
    settings.ARENA_VOICE_MEDIA_DIR = tmp_path / "voice"
    return settings.ARENA_VOICE_MEDIA_DIR

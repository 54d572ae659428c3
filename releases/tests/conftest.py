import pytest


@pytest.fixture(autouse=True)
def releases_dir(settings, tmp_path):
    """Each test writes its releases in its own folder."""
    settings.ARENA_RELEASES_DIR = tmp_path / "releases"
    return settings.ARENA_RELEASES_DIR

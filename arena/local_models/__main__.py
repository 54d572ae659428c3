"""``python -m arena.local_models serve|prepare|status|worker`` (no Django settings needed)."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from arena.local_models.files import local_model_status, prepare_local_models
from arena.local_models.serving import run_worker, serve
from arena.local_models.specs import LOCAL_MODELS, base_url_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arena.local_models")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("serve", "prepare, then serve the local models on loopback until stopped"),
        ("prepare", "join and verify split model files (idempotent)"),
        ("status", "say which local models are available, and why not"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("--only", nargs="+", choices=list(LOCAL_MODELS), metavar="KEY")
    worker = commands.add_parser("worker", help="(internal) serve one model in this process")
    worker.add_argument("key", choices=list(LOCAL_MODELS))
    worker.add_argument("--port", type=int)
    worker.add_argument("--token", help="(internal) this arena's instance token")
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=os.environ.get("LOG_LEVEL", "INFO").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # readiness polls are not news
    if args.command == "worker":
        return run_worker(args.key, args.port, args.token)
    keys = args.only or list(LOCAL_MODELS)
    if args.command == "serve":
        return serve(keys)
    statuses = (
        prepare_local_models(keys)
        if args.command == "prepare"
        else {key: local_model_status(key) for key in keys}
    )
    for key, status in statuses.items():
        state = f"available at {base_url_for(key)}" if status.available else "unavailable"
        detail = status.path if status.available else status.reason
        sys.stdout.write(f"{key}: {state}: {detail}\n")
    return 0 if all(s.available for s in statuses.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys

from django.core.management import execute_from_command_line

from arena.env_file import load_env_file


def main() -> None:
    load_env_file()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()

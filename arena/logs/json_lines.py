"""``LOG_FORMAT=json``: each log record one JSON object on one line, for a log collector.

Loaded only by the logging configuration when ``LOG_FORMAT=json`` (it imports
python-json-logger, which the plain format does not need).

A line holds a fixed set of fields and nothing else::

    {"time": "2026-01-31T12:00:00.123456+00:00", "level": "ERROR", "logger": "arena.llm",
     "message": "LLM call failed: ...", "request_id": "9f1c...", "exception": "Traceback ..."}

``request_id`` only when there is one, ``exception`` and ``stack`` only when the record has
them. Nothing a library attaches to a record with ``extra=`` is written: Django attaches the
request object to its request errors (its path and query), a database query's log its SQL
parameters (a prompt is one), and a generic formatter writes every such attribute. What the
arena logs is what its messages say, and those are written to hold no key (the LLM layer
scrubs its errors, arena.llm.errors) and no prompt.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from pythonjsonlogger.json import JsonFormatter


class JsonLines(JsonFormatter):
    """One JSON object per record, with the fields named in the module's docstring."""

    def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord,
                   message_dict: dict[str, Any]) -> None:
        # ``message_dict`` holds the formatted exception and stack (the library formats them
        # in format()); the keys of a dict logged as the message are not copied.
        log_data["time"] = datetime.fromtimestamp(record.created, tz=UTC).isoformat()
        log_data["level"] = record.levelname
        log_data["logger"] = record.name
        log_data["message"] = record.message
        request_id = getattr(record, "request_id", None)
        if request_id:
            log_data["request_id"] = request_id
        if message_dict.get("exc_info"):
            log_data["exception"] = message_dict["exc_info"]
        if message_dict.get("stack_info"):
            log_data["stack"] = message_dict["stack_info"]

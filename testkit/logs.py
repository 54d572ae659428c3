"""What the arena logs, read back in a test: its records, or its lines as ``LOG_FORMAT=json``
writes them.

pytest's ``caplog`` sees only what its handler on the root logger sees; these attach to the
named loggers themselves, so they also see what loggers that do not propagate write
(``django.*``), and what a worker thread of the test's Celery worker writes (a handler is
called in the thread that logs). The arena's own :class:`arena.logs.RequestIdFilter` puts
the request id on each record there, as in production.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from arena.logs import RequestIdFilter


class Kept(logging.Handler):
    """Keeps every record it is handed, with its ``request_id``."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.addFilter(RequestIdFilter())

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _attached(handler: logging.Handler, names: tuple[str, ...],
              level: int) -> Iterator[None]:
    with ExitStack() as stack:
        for name in names:
            logger = logging.getLogger(name)
            stack.callback(logger.setLevel, logger.level)
            stack.callback(logger.removeHandler, handler)
            logger.setLevel(level)
            logger.addHandler(handler)
        yield


@contextmanager
def records_of(*names: str, level: int = logging.INFO) -> Iterator[list[logging.LogRecord]]:
    """The records the loggers ``names`` (and those under them) log inside the block."""
    handler = Kept()
    with _attached(handler, names, level):
        yield handler.records


class JsonLinesRead:
    """The lines a JSON handler wrote: ``text`` as written, ``parsed()`` each line's object."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    def parsed(self) -> list[dict]:
        return [json.loads(line) for line in self.text.splitlines()]


@contextmanager
def json_lines_of(*names: str, level: int = logging.INFO) -> Iterator[JsonLinesRead]:
    """What the loggers ``names`` log inside the block, formatted as ``LOG_FORMAT=json``
    formats it (the settings' handler: the JSON formatter and the request id filter)."""
    from arena.logs.json_lines import JsonLines

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLines())
    handler.addFilter(RequestIdFilter())
    with _attached(handler, names, level):
        yield JsonLinesRead(stream)

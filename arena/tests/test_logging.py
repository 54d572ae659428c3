"""Log lines name the request they belong to, as JSON lines when LOG_FORMAT=json, and hold
no key and no prompt (arena.logs, arena.middleware.RequestIdMiddleware). The steps a
request starts log with its id too: battles/tests/test_request_ids.py (a battle's answers)
and panels/tests/test_request_ids.py (the judgements the answers send)."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
import types
from datetime import datetime

import pytest
from django.conf import settings
from django.test import Client

from arena.llm import LLMAuthError, LLMServerError, complete_chat
from arena.logs import REQUEST_ID, RequestIds, request_id_bound
from testkit.fake_providers import Behaviour
from testkit.logs import json_lines_of

NEW_ID = re.compile(r"[0-9a-f]{32}")
REPORT = {"csp-report": {"document-uri": "http://127.0.0.1/battle/x/",
                         "violated-directive": "img-src",
                         "blocked-uri": "https://tracker.example/p.png"}}


def report_violation(client: Client, **headers: str):
    """A request whose view logs a line (a CSP report: arena.csp, WARNING)."""
    return client.post("/csp-report", json.dumps(REPORT), content_type="application/csp-report",
                       headers=headers)


# -- (a) a request's lines are JSON lines with the id its response names -------------------

@pytest.mark.django_db  # the 404 page reads the navigation
def test_a_requests_json_lines_carry_the_id_its_response_names(client: Client):
    with json_lines_of("arena.csp", "django.request") as lines:
        reported = report_violation(client)
        missing = client.get("/no-such-page/")
    assert reported.status_code == 204 and missing.status_code == 404
    parsed = lines.parsed()  # every line parses
    assert [(line["logger"], line["level"]) for line in parsed] == [
        ("arena.csp", "WARNING"), ("django.request", "WARNING")]
    csp, not_found = parsed
    assert "tracker.example" in csp["message"]
    assert csp["request_id"] == reported["X-Request-ID"]
    assert NEW_ID.fullmatch(csp["request_id"])
    assert datetime.fromisoformat(csp["time"]).tzinfo is not None  # ISO 8601, with its zone
    # Django logs a 404 once the middleware is done with the request: the request says its id.
    assert not_found["message"] == "Not Found: /no-such-page/"
    assert not_found["request_id"] == missing["X-Request-ID"] != reported["X-Request-ID"]
    assert REQUEST_ID.get() is None  # the test's own thread keeps no request's id


async def test_under_the_async_handler_the_sync_view_logs_with_the_id_too(async_client):
    """As under daphne: the middleware runs on the loop, the view in a thread of its own."""
    with json_lines_of("arena.csp") as lines:
        response = await async_client.post("/csp-report", json.dumps(REPORT),
                                           content_type="application/csp-report")
    assert response.status_code == 204
    assert [line["request_id"] for line in lines.parsed()] == [response["X-Request-ID"]]
    assert REQUEST_ID.get() is None  # the test's task keeps no request's id


# -- (b) a caller's id is kept only when it is a short safe token -------------------------------

@pytest.mark.parametrize("incoming", ["trace-01.AB_c", "a" * 64])
def test_a_safe_incoming_request_id_is_kept(client: Client, incoming: str):
    with json_lines_of("arena.csp") as lines:
        response = report_violation(client, **{"X-Request-ID": incoming})
    assert response["X-Request-ID"] == incoming
    assert [line["request_id"] for line in lines.parsed()] == [incoming]


@pytest.mark.parametrize("incoming", [
    "a" * 65, "two words", "line\nbreak", 'quo"te', "", "ünïcode", "id;drop"])
def test_an_unsafe_incoming_request_id_is_replaced(client: Client, incoming: str):
    with json_lines_of("arena.csp") as lines:
        response = report_violation(client, **{"X-Request-ID": incoming})
    assert NEW_ID.fullmatch(response["X-Request-ID"])
    assert [line["request_id"] for line in lines.parsed()] == [response["X-Request-ID"]]


async def test_a_websocket_connection_runs_under_an_id_of_its_own():
    seen: list[str | None] = []

    async def consumer(scope, receive, send):
        seen.append(REQUEST_ID.get())

    app = RequestIds(consumer)
    await app({"type": "websocket", "headers": [(b"x-request-id", b"ws-7")]}, None, None)
    await app({"type": "websocket", "headers": [(b"x-request-id", b"bad id")]}, None, None)
    await app({"type": "websocket"}, None, None)
    assert seen[0] == "ws-7"
    assert NEW_ID.fullmatch(seen[1]) and NEW_ID.fullmatch(seen[2]) and seen[1] != seen[2]
    assert REQUEST_ID.get() is None


# -- what a JSON line holds ---------------------------------------------------------------------

def test_a_json_line_holds_its_own_fields_and_never_what_a_library_attached():
    """Django attaches the request to its request errors and a query's parameters to its
    query log; a line must not write them out (they hold paths, queries, prompts)."""
    logger = logging.getLogger("arena.probe")
    with json_lines_of("arena.probe") as lines, request_id_bound("req-1"):
        try:
            raise ValueError("the cause")
        except ValueError:
            logger.exception("it failed", extra={"params": ["a visitor's prompt"],
                                                 "request": object(), "sql": "SELECT 1"})
    (line,) = lines.parsed()
    assert set(line) == {"time", "level", "logger", "message", "request_id", "exception"}
    assert line["message"] == "it failed" and line["request_id"] == "req-1"
    assert "Traceback" in line["exception"] and "ValueError: the cause" in line["exception"]
    assert "prompt" not in lines.text and "SELECT" not in lines.text


def test_a_line_outside_any_request_has_no_request_id():
    with json_lines_of("arena.probe") as lines:
        logging.getLogger("arena.probe").info("on its own")
    (line,) = lines.parsed()
    assert "request_id" not in line and line["message"] == "on its own"


# -- nothing secret in a logged LLM failure ------------------------------------------------------

PROMPT = "my neighbour's secret recipe for plum jam"


async def test_a_logged_llm_failure_names_neither_the_key_nor_the_prompt(
        fake_openai, monkeypatch, fast_llm_retries):
    """The provider echoes the wrong key it was sent (as OpenAI does); the line says what
    failed, for which request, and nothing the visitor or the operator must keep."""
    wrong = "sk-wrongkey0123456789abcdef"
    monkeypatch.setenv(fake_openai.api_key_env, wrong)
    endpoint = fake_openai.endpoint("model-a")
    with (json_lines_of("arena.llm", level=logging.DEBUG) as lines, request_id_bound("req-llm"),
          pytest.raises(LLMAuthError)):
        await complete_chat(endpoint, [{"role": "user", "content": PROMPT}])
    # It was sent the wrong key, which its 401 says back ("Incorrect API key provided: ...").
    assert fake_openai.received_key(fake_openai.chat_requests[0]) == wrong
    failed = [line for line in lines.parsed() if line["level"] == "ERROR"]
    assert len(failed) == 1 and failed[0]["message"].startswith("LLM call failed")
    assert failed[0]["request_id"] == "req-llm"
    assert wrong not in lines.text and "0123456789abcdef" not in lines.text
    assert PROMPT not in lines.text and "plum jam" not in lines.text


async def test_a_logged_retry_and_failure_never_echo_the_key(fake_openai, fast_llm_retries):
    fake_openai.default = Behaviour.status(500, "Server trouble", echo_key=True)
    endpoint = fake_openai.endpoint("model-a")
    with json_lines_of("arena.llm", level=logging.DEBUG) as lines, pytest.raises(LLMServerError):
        await complete_chat(endpoint, [{"role": "user", "content": PROMPT}])
    levels = [line["level"] for line in lines.parsed()]
    assert levels.count("WARNING") >= 1 and levels[-1] == "ERROR"  # retries, then gave up
    assert fake_openai.api_key not in lines.text and PROMPT not in lines.text


def test_daphnes_access_lines_go_through_logging_in_json_mode(settings, monkeypatch):
    """daphne writes them straight to stdout in its own format unless its command line is
    handed another writer (arena.webserver.access_log_through_logging, run by asgi.py)."""
    from daphne.access import AccessLogGenerator

    from arena.webserver import access_log_through_logging

    cli = types.ModuleType("daphne.cli")
    cli.AccessLogGenerator = AccessLogGenerator
    monkeypatch.setitem(sys.modules, "daphne.cli", cli)
    settings.LOG_FORMAT = "plain"
    access_log_through_logging()
    assert cli.AccessLogGenerator is AccessLogGenerator  # plain: daphne's own lines
    settings.LOG_FORMAT = "json"
    access_log_through_logging()
    written = io.StringIO()
    with json_lines_of("daphne.access") as lines:
        cli.AccessLogGenerator(written)("http", "complete", {
            "client": "127.0.0.1:5000", "method": "GET", "path": "/api/models",
            "status": 200, "size": 42})
    assert written.getvalue() == ""
    (line,) = lines.parsed()
    assert line["logger"] == "daphne.access"
    assert line["message"] == '127.0.0.1:5000 "GET /api/models" 200 42'


# -- (d) the settings wire it in every process ---------------------------------------------------

def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=settings.BASE_DIR, capture_output=True, text=True,
        timeout=120, env={**os.environ, "DJANGO_SETTINGS_MODULE": "arena.settings", **env})


ONE_LINE = """
import logging, sys
import django
django.setup()
logging.getLogger("arena.probe").warning("one line\\nwith a break")
sys.stderr.write(str("pythonjsonlogger" in sys.modules))
"""


def test_json_format_writes_one_json_line_per_record():
    result = _python(ONE_LINE, LOG_FORMAT="json")
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    parsed = json.loads(line)
    assert {k: parsed[k] for k in ("level", "logger", "message")} == {
        "level": "WARNING", "logger": "arena.probe", "message": "one line\nwith a break"}
    datetime.fromisoformat(parsed["time"])


def test_plain_format_stays_a_line_for_people_and_loads_no_json_logger():
    result = _python(ONE_LINE, LOG_FORMAT="")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\S+ \S+ WARNING arena\.probe: one line\nwith a break\n",
                        result.stdout)
    assert result.stderr.endswith("False")


def test_an_unknown_log_format_fails_loudly():
    result = _python(ONE_LINE, LOG_FORMAT="xml")
    assert result.returncode != 0
    assert "ImproperlyConfigured: LOG_FORMAT='xml' must be plain or json" in result.stderr


CELERY_START = """
import logging
import django
django.setup()
from arena.celery import app
app.log.setup(loglevel="INFO")  # what `celery worker` and `celery beat` do as they start
logging.getLogger("celery.probe").info("a worker's line")
"""


def test_celery_worker_and_beat_keep_the_json_lines():
    """Celery replaces the root logger's handler with its own format unless told not to."""
    result = _python(CELERY_START, LOG_FORMAT="json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(line["logger"], line["message"]) for line in lines] == [
        ("celery.probe", "a worker's line")]
    assert "a worker's line" not in result.stderr

"""What the platform answers before an operation runs is documented on the operation, and a
query parameter no database can take is a 4xx, never a 500 (issue 33, finding 7).

Before: ``GET /api/sessions?offset=9223372036854775808`` was a 500 on PostgreSQL (past a
64-bit integer), ``?limit=x`` a 422 and a NUL byte in ``GET /api/debates?category=`` a 400
that neither operation documented."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from battles.tests.factories import ThreadFactory
from testkit.visitors import visitor_session_key

pytestmark = pytest.mark.django_db

SCHEMAS = ["/api/openapi.json", "/voice-api/openapi.json"]


def operations(client: Client):
    for url in SCHEMAS:
        schema = client.get(url).json()
        for path, methods in schema["paths"].items():
            for method, operation in methods.items():
                yield path, method.upper(), operation


def documented(operation: dict) -> set[int]:
    return {int(status) for status in operation["responses"]}


def test_every_query_parameter_answers_a_documented_status_for_what_it_refuses(client):
    tried = 0
    for path, method, operation in operations(client):
        query = [p for p in operation.get("parameters", []) if p["in"] == "query"]
        if method != "GET" or not query or "{" in path:
            continue
        for parameter in query:
            for bad in ("a\x00b", "not-a-number", "9223372036854775808", "-1"):
                answer = client.get(path, {parameter["name"]: bad})
                tried += 1
                assert answer.status_code < 500, (path, parameter["name"], bad)
                assert answer.status_code in documented(operation), (
                    path, parameter["name"], bad, answer.status_code, answer.content[:200])
    assert tried >= 40


def test_an_offset_past_any_integer_a_database_takes_is_a_422():
    key = visitor_session_key()
    ThreadFactory(session_key=key)
    visitor = Client()
    visitor.cookies[settings.SESSION_COOKIE_NAME] = key
    for offset in ("9223372036854775808", str(2**31)):
        answer = visitor.get("/api/sessions", {"offset": offset})
        assert answer.status_code == 422, answer.content
        assert "offset" in answer.json()["detail"]
    assert visitor.get("/api/sessions", {"offset": str(2**31 - 1)}).json()["count"] == 1


def test_a_nul_byte_in_a_path_parameter_is_a_documented_400(client):
    for path, method, operation in operations(client):
        if method == "GET" and "{" in path:
            url = path.split("{")[0] + "a%00b" + path.split("}", 1)[1]
            answer = client.get(url)
            assert answer.status_code == 400 and 400 in documented(operation), (url, answer)

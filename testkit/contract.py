"""Keep a live API to its OpenAPI file: schemathesis generates requests for every operation
and sends them to a live server; no answer may be a 5xx, carry an undocumented status or
content type, or break its documented schema. The requests come as the site's own pages send
them (an ``Origin`` of the server: writes are refused from anywhere else), with or without a
visitor's session cookie."""

from __future__ import annotations

from urllib.parse import urlsplit

import schemathesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


def _site(schema_url: str, session_key: str | None) -> tuple[dict, dict | None]:
    """The headers and cookies of the site's own pages (with the visitor's session)."""
    from django.conf import settings

    parts = urlsplit(schema_url)
    headers = {"Origin": f"{parts.scheme}://{parts.netloc}"}
    return headers, {settings.SESSION_COOKIE_NAME: session_key} if session_key else None


def contract_failures(schema_url: str, *, at_least: int, session_key: str | None = None,
                      labels: list[str] | None = None, max_examples: int = 12) -> list[str]:
    """Every operation of the schema at ``schema_url`` (or those of ``labels``, such as
    ``"POST /api/votes"``) tried with up to ``max_examples`` generated requests each (with
    ``session_key`` as the session cookie, if given); what broke the contract, one line per
    operation (empty: all kept it)."""
    headers, cookies = _site(schema_url, session_key)
    # schemathesis' own pytest plugin does not run under pytest 9; its Python API does.
    schema = schemathesis.openapi.from_url(schema_url)
    operations = [result.ok() for result in schema.get_all_operations()]
    if labels is not None:
        operations = [operation for operation in operations if operation.label in labels]
    assert len(operations) >= at_least, f"{len(operations)} operations in {schema_url}"
    failures: list[str] = []
    for operation in operations:
        @given(case=operation.as_strategy())
        @hypothesis_settings(max_examples=max_examples, deadline=None, derandomize=True,
                             database=None, phases=[Phase.explicit, Phase.generate],
                             suppress_health_check=list(HealthCheck))
        def keeps_contract(case):
            case.call_and_validate(checks=CHECKS, headers=headers, cookies=cookies)

        try:
            keeps_contract()
        except Exception as exc:  # every operation is tried; all failures are reported
            failures.append(f"{operation.label}: {exc}")
    return failures


def call_validated(schema_url: str, label: str, *, session_key: str | None = None,
                   **case):  # noqa: ANN003, ANN201 - schemathesis' Case fields; a response
    """One request of the operation ``label`` with the given parts (``path_parameters``,
    ``query``, ``body``), as the site's pages send it; its response, once it has kept the
    contract (an AssertionError or schemathesis' failure names what it broke)."""
    headers, cookies = _site(schema_url, session_key)
    operation = schemathesis.openapi.from_url(schema_url).find_operation_by_label(label)
    assert operation is not None, f"no operation {label} in {schema_url}"
    return operation.Case(**case).call_and_validate(checks=CHECKS, headers=headers,
                                                    cookies=cookies)


def no_step_unfinished() -> bool:
    from arena.steps import FINISHED, step_models

    return not any(m.objects.exclude(status__in=FINISHED).exists() for m in step_models())

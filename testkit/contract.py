"""Keep a live API to its OpenAPI file: schemathesis generates requests for every operation
and sends them to a live server; no answer may be a 5xx, carry an undocumented status or
content type, or break its documented schema. The requests come as the site's own pages send
them (an ``Origin`` of the server: writes are refused from anywhere else), with or without a
visitor's session cookie."""

from __future__ import annotations

from collections.abc import Callable
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


def contract_failures(schema_url: str, *, at_least: int, session_key: str | None = None,
                      only: Callable[[str], bool] | None = None) -> list[str]:
    """Every operation of the schema at ``schema_url`` (those whose label, e.g. ``GET
    /api/debates/usage``, ``only`` keeps) tried with generated requests (with ``session_key``
    as the session cookie, if given); what broke the contract, one line per operation
    (empty: all kept it)."""
    from django.conf import settings

    parts = urlsplit(schema_url)
    headers = {"Origin": f"{parts.scheme}://{parts.netloc}"}
    cookies = {settings.SESSION_COOKIE_NAME: session_key} if session_key else None
    # schemathesis' own pytest plugin does not run under pytest 9; its Python API does.
    schema = schemathesis.openapi.from_url(schema_url)
    operations = [op for op in (result.ok() for result in schema.get_all_operations())
                  if only is None or only(op.label)]
    assert len(operations) >= at_least, f"{len(operations)} operations in {schema_url}"
    failures: list[str] = []
    for operation in operations:
        @given(case=operation.as_strategy())
        @hypothesis_settings(max_examples=12, deadline=None, derandomize=True,
                             database=None, phases=[Phase.explicit, Phase.generate],
                             suppress_health_check=list(HealthCheck))
        def keeps_contract(case):
            case.call_and_validate(checks=CHECKS, headers=headers, cookies=cookies)

        try:
            keeps_contract()
        except Exception as exc:  # every operation is tried; all failures are reported
            failures.append(f"{operation.label}: {exc}")
    return failures


def no_step_unfinished() -> bool:
    from arena.steps import FINISHED, step_models

    return not any(m.objects.exclude(status__in=FINISHED).exists() for m in step_models())

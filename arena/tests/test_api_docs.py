"""The API docs page works offline (Swagger UI from our own static files, hashes pinned), and
cross-origin access to the JSON API follows CORS_ORIGINS."""

from __future__ import annotations

import hashlib
import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

# The Swagger UI files of the pinned django-ninja wheel (pyproject.toml: django-ninja==1.7.1).
SWAGGER_ASSETS = {
    "ninja/swagger-ui-bundle.js":
        "93b7b0862a80e2786f85b560be7693c2344354ffa7e7e224f850a54349724c31",
    "ninja/swagger-ui.css": "9e576f8322132c76949da47f9bb53c891373c303ea3a761ff548ffc9de50a98c",
    "ninja/swagger-ui-init.js":
        "701582e1d64799a23349becd0a580a5113b915f3e129051108851fd64cd31675",
}
FRONT_END = "http://localhost:3000"


def test_the_swagger_files_are_the_pinned_ones():
    for name, digest in SWAGGER_ASSETS.items():
        path = finders.find(name)
        assert path, f"{name} is not among the static files"
        with open(path, "rb") as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == digest, name


@pytest.mark.django_db
def test_the_docs_page_loads_nothing_from_another_host(client: Client):
    response = client.get("/api/docs")
    assert response.status_code == 200
    html = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert "/static/ninja/swagger-ui-bundle.js" in sources
    assert "/static/ninja/swagger-ui.css" in sources
    assert not [s for s in sources if "//" in s], sources


@pytest.mark.django_db
def test_no_cross_origin_access_when_cors_origins_is_unset(client: Client, settings):
    settings.CORS_ALLOWED_ORIGINS = []
    response = client.options("/api/battles", HTTP_ORIGIN=FRONT_END,
                              HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST")
    assert "access-control-allow-origin" not in response.headers


@pytest.mark.django_db
def test_a_listed_origin_may_call_the_api_with_cookies(client: Client, settings):
    settings.CORS_ALLOWED_ORIGINS = [FRONT_END]
    preflight = client.options("/api/battles", HTTP_ORIGIN=FRONT_END,
                               HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
                               HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type")
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == FRONT_END
    assert preflight.headers["access-control-allow-credentials"] == "true"
    assert "POST" in preflight.headers["access-control-allow-methods"]
    answer = client.get("/api/models", HTTP_ORIGIN=FRONT_END)
    assert answer.headers["access-control-allow-origin"] == FRONT_END

    other = client.get("/api/models", HTTP_ORIGIN="http://evil.example")
    assert "access-control-allow-origin" not in other.headers
    # Pages are never shared across origins, whatever the list says.
    page = client.get("/", HTTP_ORIGIN=FRONT_END)
    assert "access-control-allow-origin" not in page.headers

"""Base layout, health, error pages, vendored htmx, Markdown sanitising."""

import hashlib
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from arena.markdown import render_markdown

HTMX_SHA256 = "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"


VENDORED = {
    "htmx-2.0.11.min.js": HTMX_SHA256,
    "markdown-it-14.1.0.min.js": "38c70a1e7ca91ab40e2d9e6e60129851a717ed1c7d4acbbdd41bf9503791cf68",
    "purify-3.2.6.min.js": "89e1fa7647cb495370d3a997ace4387f5d15d9f4c5af12352c53daa400956287",
    "highlight-11.11.1.min.js": "c4a399dd6f488bc97a3546e3476747b3e714c99c57b9473154c6fb8d259b9381",
}


@pytest.mark.parametrize(("name", "digest"), VENDORED.items())
def test_vendored_javascript_is_the_pinned_file(name, digest):
    path = Path(settings.BASE_DIR) / "static" / "js" / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert name in (Path(settings.BASE_DIR) / "static" / "js" / "VENDORED.md").read_text()


@pytest.mark.django_db
def test_home_has_the_navigation_and_htmx(client: Client):
    html = client.get("/").content.decode()
    for label, url in [("Battle", "/battle/"), ("Panel", "/panel/"), ("Debates", "/debates/"),
                       ("Voice", "/voice/"), ("Leaderboard", "/leaderboard/")]:
        assert f'href="{url}"' in html and label in html
    assert "htmx-2.0.11.min.js" in html
    assert 'name="viewport"' in html


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/battle/", "/panel/", "/leaderboard/"])
def test_no_template_comment_reaches_a_page(client: Client, path: str):
    """Django's {# #} is one line only; a longer one is printed on the page as text."""
    html = client.get(path).content.decode()
    assert "{#" not in html and "#}" not in html
    assert ('name="htmx-config" content=\'{"defaultSettleDelay": 0, "allowEval": false, '
            '"allowScriptTags": false}\'') in html


@pytest.mark.django_db
def test_unknown_page_is_a_friendly_404_and_unknown_api_is_json(client: Client, settings):
    settings.DEBUG = False
    page = client.get("/no-such-page/")
    assert page.status_code == 404 and b"Not found" in page.content
    api = client.get("/api/no-such-thing")
    assert api.status_code == 404 and api.json() == {"detail": "Not found."}


@pytest.fixture
def keyed_model(db):
    """A model whose key variable is unset: the detailed health names the variable."""
    from arena.models import AIModel, ProviderKind

    return AIModel.objects.create(
        slug="hidden-model-9b", name="Hidden 9B", api_model="hidden", organization="Hiddenorg",
        provider="Hiddenprov", provider_kind=ProviderKind.OPENAI, base_url="http://127.0.0.1:9/v1",
        api_key_env="HIDDEN_PROVIDER_KEY", license="Apache-2.0", max_tokens=16)


@pytest.mark.django_db
def test_healthz_tells_everyone_only_whether_the_arena_is_up(client: Client, keyed_model):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": {"ok": True}, "redis": {"ok": True}, "ok": True}
    for secret in (keyed_model.slug, keyed_model.api_key_env, connection.vendor):
        assert secret not in response.content.decode()


@pytest.mark.django_db
def test_healthz_details_need_the_token_or_staff(client: Client, settings, keyed_model,
                                                 admin_user):
    settings.ARENA_HEALTH_TOKEN = "s3cret-health"
    wrong = client.get("/healthz", HTTP_AUTHORIZATION="Bearer nope").json()
    assert set(wrong) == {"database", "redis", "ok"}
    for ask in ({"HTTP_AUTHORIZATION": "Bearer s3cret-health"}, None):
        if ask is None:
            client.force_login(admin_user)
        body = client.get("/healthz", **(ask or {})).json()
        assert set(body) == {"database", "redis", "worker", "models", "ok"}
        assert body["database"]["engine"] == connection.vendor
        assert body["worker"]["workers"] == 0  # no worker runs in this test
        assert "HIDDEN_PROVIDER_KEY" in body["models"]["models"][keyed_model.slug]["reason"]


def test_healthz_reports_redis_down_with_503(client: Client, settings, db):
    settings.REDIS_URL = "redis://127.0.0.1:9/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["redis"]["ok"] is False


@pytest.mark.parametrize(
    ("markdown", "forbidden"),
    [
        ("<script>alert(1)</script>", "<script"),
        ("[x](javascript:alert(1))", 'href="javascript'),
        ('<img src=x onerror="alert(1)">', "<img"),
        ('![x](https://h/i.png "t")', "onerror"),
        ("<iframe src='https://evil'></iframe>", "<iframe"),
        ("![pixel](https://tracker.example/p.png)", "<img"),
        ("<svg onload=alert(1)><circle/></svg>", "<svg"),
        ("<style>body{display:none}</style>", "<style"),
        ("[x](data:text/html,<script>alert(1)</script>)", 'href="data:'),
    ],
)
def test_model_markdown_is_sanitised(markdown, forbidden):
    assert forbidden not in render_markdown(markdown)


def test_a_model_image_is_shown_as_a_link_and_never_loaded():
    html = render_markdown("![the chart](https://example.org/chart.png)")
    assert '<a href="https://example.org/chart.png"' in html and ">the chart</a>" in html
    assert "<img" not in html


def test_model_markdown_keeps_formatting():
    source = "**bold**\n\n```python\nprint(1)\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    html = render_markdown(source)
    assert "<strong>bold</strong>" in html and "<pre><code" in html and "<table>" in html

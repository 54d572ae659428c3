"""/metrics: Prometheus's format, a bearer token, every process of the node summed
(:mod:`arena.metrics`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import httpx
import pytest
from django.conf import settings
from django.test import Client

from arena.llm import LLMError, complete_chat, stream_chat
from arena.views import METRICS_UNAUTHORIZED
from testkit.fake_providers import Behaviour
from testkit.live import keyless
from testkit.metrics import samples, scraped_here, value
from testkit.registry import make_model

TOKEN = "metrics-token-for-tests"


@pytest.fixture
def token(settings):
    settings.ARENA_METRICS_TOKEN = TOKEN
    return TOKEN


def test_metrics_are_off_without_a_token(settings, db):
    settings.ARENA_METRICS_TOKEN = ""
    assert Client().get("/metrics").status_code == 404


@pytest.mark.parametrize("sent", [None, "Bearer wrong-token", f"Basic {TOKEN}", "Bearer "])
def test_metrics_refuse_a_missing_or_wrong_token_with_401(token, sent):
    headers = {"HTTP_AUTHORIZATION": sent} if sent else {}
    answer = Client().get("/metrics", **headers)
    assert answer.status_code == 401
    assert answer["WWW-Authenticate"].startswith("Bearer")
    assert answer.json() == {"detail": METRICS_UNAUTHORIZED}
    assert TOKEN not in answer.content.decode()


def test_api_health_is_healthz_with_details_for_the_metrics_token(token, db):
    plain = Client().get("/api/health")
    assert plain.status_code == 200
    assert set(plain.json()) == {"database", "redis", "ok"}
    assert plain.json()["database"] == {"ok": True}  # no engine named without the token
    detailed = Client().get("/api/health", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").json()
    assert {"worker", "models"} <= set(detailed)
    assert detailed["database"]["engine"] == ("sqlite" if "sqlite" in
                                              settings.DATABASES["default"]["ENGINE"]
                                              else "postgresql")


async def _get(path: str, headers: list[tuple[bytes, bytes]] = ()) -> int:
    from channels.testing import HttpCommunicator

    from arena.asgi import application

    communicator = HttpCommunicator(application, "GET", path,
                                    headers=[(b"host", b"127.0.0.1"), *headers])
    return (await communicator.get_response(timeout=30))["status"]


@pytest.mark.django_db(transaction=True)
def test_each_request_is_counted_by_its_route_pattern_never_by_its_ids():
    before = scraped_here()
    statuses = [asyncio.run(_get(path)) for path in (
        "/api/models", "/api/models", "/api/battles/00000000-0000-0000-0000-000000000000",
        "/no-such-page/")]
    after = scraped_here()
    assert statuses == [200, 200, 404, 404]

    def grew(route: str, status: str) -> float:
        labels = {"route": route, "method": "GET", "status": status}
        return (value(after, "arena_http_requests_total", **labels)
                - value(before, "arena_http_requests_total", **labels))

    assert grew("api/models", "200") == 2
    assert grew("api/battles/<battle_id>", "404") == 1
    assert grew("(unmatched)", "404") == 1
    timed = {"route": "api/models", "method": "GET"}
    assert (value(after, "arena_http_request_seconds_count", **timed)
            - value(before, "arena_http_request_seconds_count", **timed)) == 2
    assert not [key for key in after if "00000000" in str(key)]  # no id became a label


def test_model_calls_are_counted_with_tokens_cost_and_errors_by_kind(fake_openai,
                                                                     fast_llm_retries):
    endpoint = fake_openai.endpoint("priced-model", provider="Pricedprov",
                                    input_price_per_million=2.0,
                                    output_price_per_million=10.0)
    labels = {"provider": "Pricedprov", "model": "priced-model"}
    before = scraped_here()
    done = asyncio.run(stream_chat(endpoint, [{"role": "user", "content": "Say hi"}]))
    fake_openai.script(Behaviour.status(400, "bad request"))
    with pytest.raises(LLMError) as failed:
        asyncio.run(complete_chat(endpoint, [{"role": "user", "content": "Say hi"}]))
    after = scraped_here()

    def grew(name: str, **more) -> float:
        return value(after, name, **labels, **more) - value(before, name, **labels, **more)

    assert grew("arena_model_calls_total", outcome="ok") == 1
    assert grew("arena_model_calls_total", outcome="failed") == 1
    assert grew("arena_model_errors_total", kind=type(failed.value).__name__) == 1
    assert grew("arena_model_tokens_total", direction="input") == done.input_tokens
    assert grew("arena_model_tokens_total", direction="output") == done.output_tokens
    assert grew("arena_model_cost_usd_total") == pytest.approx(done.cost_usd)
    assert done.cost_usd > 0
    assert grew("arena_model_call_seconds_count") == 1
    assert grew("arena_model_first_token_seconds_count") == 1  # streamed: it has one


def test_a_scrape_sums_every_process_of_the_node():
    """Another process (a worker, daphne) writes its own files in the folder: counted too."""
    before = value(scraped_here(), "arena_votes_total", mode="elsewhere")
    code = ("import django; django.setup()\n"
            "from arena import metrics\n"
            "class Vote: pass\n"
            "Vote._meta = type('Meta', (), {'app_label': 'elsewhere'})\n"
            "for _ in range(3): metrics.vote_cast(Vote())\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120,
                   cwd=settings.BASE_DIR,
                   env={**os.environ, "DJANGO_SETTINGS_MODULE": "arena.settings"})
    assert value(scraped_here(), "arena_votes_total", mode="elsewhere") - before == 3


def test_a_battle_voted_through_the_web_process_shows_on_its_metrics(
        asgi_live_server, celery_worker, fake_openai):
    """daphne (its own process) counts the requests and the vote, the worker the model calls
    and steps: daphne's /metrics shows them all."""
    two_models = [make_model(fake_openai, slug) for slug in ("alpha-7b", "beta-3b")]
    keyless(fake_openai, two_models)
    auth = {"Authorization": f"Bearer {os.environ['ARENA_METRICS_TOKEN']}"}
    with httpx.Client(base_url=asgi_live_server, timeout=60,
                      headers={"Origin": asgi_live_server}) as web:
        def scrape() -> dict:
            answer = web.get("/metrics", headers=auth)
            assert answer.status_code == 200, answer.text
            assert answer.headers["content-type"].startswith("text/plain")
            return samples(answer.text)

        before = scrape()
        battle = web.post("/api/battles", json={"prompt": "Name a colour."})
        assert battle.status_code == 200, battle.text
        voted = web.post("/api/votes", content=json.dumps(
            {"battle_id": battle.json()["battle_id"], "vote": "tie"}),
            headers={"Content-Type": "application/json"})
        assert voted.status_code == 200, voted.text
        after = scrape()

    def grew(name: str, **labels) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("arena_http_requests_total", route="api/battles", method="POST",
                status="200") == 1
    assert grew("arena_votes_total", mode="battles") == 1
    assert grew("arena_steps_total", mode="battles", kind="Response", status="done") == 2
    assert grew("arena_step_queue_wait_seconds_count", mode="battles", kind="Response") == 2
    calls = sum(grew("arena_model_calls_total", provider="Fakeprov", model=model.slug,
                     outcome="ok") for model in two_models)
    assert calls == 2


@pytest.mark.django_db(transaction=True)  # Channels checks the database connection
async def test_open_sockets_are_counted_by_mode_while_they_are_open():
    from asgiref.sync import sync_to_async
    from channels.generic.websocket import AsyncWebsocketConsumer
    from channels.testing import WebsocketCommunicator

    from arena.metrics import RequestMetrics

    def open_now(mode: str) -> float:
        return value(scraped_here(), "arena_open_sockets", mode=mode)

    application = RequestMetrics(AsyncWebsocketConsumer.as_asgi())
    paths = {"battles": "/ws/battles/some-id/", "voice": "/battles/some-id/agent-stream"}
    before = {mode: await sync_to_async(open_now)(mode) for mode in paths}
    sockets = [WebsocketCommunicator(application, path) for path in paths.values()]
    for socket in sockets:
        connected, _ = await socket.connect(timeout=30)
        assert connected
    assert {mode: await sync_to_async(open_now)(mode) - before[mode] for mode in paths} == {
        "battles": 1, "voice": 1}
    for socket in sockets:
        await socket.disconnect()
    assert {mode: await sync_to_async(open_now)(mode) for mode in paths} == before


def test_an_arena_started_from_another_counts_in_its_own_folder(tmp_path):
    """A run command started from a process of another arena (a test, a second run command)
    inherits its PROMETHEUS_MULTIPROC_DIR; emptying that at start made the first one's counts
    vanish (its open files unlinked), so the folder is always the var folder's own."""
    inherited = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    code = ("import os, django; django.setup()\n"
            "from arena.metrics import metrics_folder\n"
            "print(os.environ['PROMETHEUS_MULTIPROC_DIR'], metrics_folder())\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, timeout=120,
                         capture_output=True, text=True, cwd=settings.BASE_DIR,
                         env={**os.environ, "DJANGO_SETTINGS_MODULE": "arena.settings",
                              "ARENA_VAR_DIR": str(tmp_path), "PROMETHEUS_MULTIPROC_DIR":
                              inherited}).stdout.split()
    assert out == [str(tmp_path / "metrics")] * 2 != [inherited] * 2


def test_a_client_gone_before_the_answer_is_counted_apart_from_an_application_that_failed():
    """Django answers nothing to a request whose client disconnected (the run command's 1 s
    readiness probe on a web still starting): 499, not a 500 that reads as the arena
    failing."""
    from arena.metrics import RequestMetrics

    async def left(scope, receive, send):  # noqa: ANN001, ANN202
        return None

    async def failed(scope, receive, send):  # noqa: ANN001, ANN202
        raise RuntimeError("a bug")

    async def call(app) -> None:  # noqa: ANN001
        async def receive():  # noqa: ANN202
            return {"type": "http.disconnect"}

        async def send(message):  # noqa: ANN001, ANN202
            return None

        await RequestMetrics(app)({"type": "http", "method": "GET", "path": "/x"}, receive,
                                  send)

    before = scraped_here()
    asyncio.run(call(left))
    with pytest.raises(RuntimeError):
        asyncio.run(call(failed))
    after = scraped_here()
    for status in ("499", "500"):
        labels = {"route": "(unmatched)", "method": "GET", "status": status}
        assert (value(after, "arena_http_requests_total", **labels)
                - value(before, "arena_http_requests_total", **labels)) == 1

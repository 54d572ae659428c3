"""An arena trusts only its own local model servers: a server on the recorded port that
reports another arena's token (or none) is not this arena's model."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from arena.availability import NOT_OURS, NOT_RUNNING, model_availability
from arena.local_models.files import local_model_status
from arena.local_models.specs import alias_for, clear_instance, write_instance
from arena.models import AIModel


class ModelServer(ThreadingHTTPServer):
    """Answers like llama.cpp's server: /health, and /v1/models with one model name."""

    def __init__(self, alias: str) -> None:
        alias_ = alias

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - stdlib name
                body = ({"status": "ok"} if self.path.endswith("/health")
                        else {"object": "list", "data": [{"id": alias_, "object": "model"}]})
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server_address[1]


@pytest.fixture
def smollm2(db):
    if not local_model_status("smollm2").available:
        pytest.skip(local_model_status("smollm2").reason)
    return AIModel.objects.create(slug="smollm2-135m", name="SmolLM2", api_model="smollm2",
                                  provider="Local (llama.cpp)", provider_kind="openai",
                                  is_local=True,
                                  local_key="smollm2")


@pytest.fixture
def served(settings):
    settings.ARENA_PING_CACHE_SECONDS = 0
    servers = []

    def serve(alias: str, token: str) -> ModelServer:
        server = ModelServer(alias)
        servers.append(server)
        write_instance({"pid": os.getpid(), "token": token, "ports": {"smollm2": server.port}})
        return server

    yield serve
    for server in servers:
        server.shutdown()
    clear_instance(os.getpid())


def test_its_own_server_is_available(smollm2, served):
    served(alias_for("smollm2", "mine"), token="mine")
    assert model_availability(smollm2).available


def test_another_arenas_server_on_the_recorded_port_is_not_ours(smollm2, served):
    server = served(alias_for("smollm2", "theirs"), token="mine")
    availability = model_availability(smollm2)
    assert not availability.available
    assert availability.reason == NOT_OURS.format(port=server.port)


def test_no_record_means_not_running(smollm2):
    assert model_availability(smollm2).reason == NOT_RUNNING

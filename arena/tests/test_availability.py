"""Endpoint probes: cached, and one at a time per endpoint when many requests find the cached
answer expired together (a burst after a quiet spell)."""

from __future__ import annotations

import threading

from django.core.cache import cache

from arena.availability import endpoint_probe
from arena.models import ProviderKind


def test_a_burst_of_requests_probes_a_cold_endpoint_once(fake_openai, monkeypatch):
    cache.clear()
    answer = fake_openai.models_payload

    def slow_models_payload():  # a slow endpoint: every other request arrives meanwhile
        threading.Event().wait(0.3)
        return answer()

    monkeypatch.setattr(fake_openai, "models_payload", slow_models_payload)
    start = threading.Barrier(20)
    answers = []

    def probe():
        start.wait()
        answers.append(endpoint_probe(fake_openai.base_url, kind=ProviderKind.OPENAI))

    threads = [threading.Thread(target=probe) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [(True, "ready")] * 20
    probes = [r for r in fake_openai.requests if r.path.endswith("/models")]
    assert len(probes) == 1


def test_a_down_endpoint_is_reported_in_words():
    cache.clear()
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    reachable, why = endpoint_probe(f"http://127.0.0.1:{port}/v1", kind=ProviderKind.OPENAI)
    assert (reachable, why) == (False, "connection refused")

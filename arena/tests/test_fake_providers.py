"""The fake provider servers speak the real wire formats (checked with httpx and the real SDKs)."""

from __future__ import annotations

import json
import threading
from typing import Any

import anthropic
import httpx
import openai
import pytest

from testkit.fake_providers import (
    Behaviour,
    FakeAnthropicServer,
    FakeOpenAIServer,
    split_tokens,
)
from testkit.waiting import ceiling, wait_for

USER = [{"role": "user", "content": "hello there"}]


def _openai_headers(server: FakeOpenAIServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.api_key}"}


def _anthropic_headers(server: FakeAnthropicServer) -> dict[str, str]:
    return {"x-api-key": server.api_key or "", "anthropic-version": "2023-06-01"}


def _sse_data(text: str) -> list[str]:
    return [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]


def _sse_events(text: str) -> list[str]:
    return [line[len("event: ") :] for line in text.splitlines() if line.startswith("event: ")]


def test_split_tokens_round_trips() -> None:
    text = "  gpt says:  hello\nthere  "
    assert "".join(split_tokens(text)) == text
    assert split_tokens("a b c") == ["a ", "b ", "c"]


# -- OpenAI ---------------------------------------------------------------------------------------


def test_openai_plain_answer_echoes_request(fake_openai: FakeOpenAIServer) -> None:
    body = {
        "model": "m1",
        "messages": [{"role": "system", "content": "be brief"}, *USER],
    }
    response = httpx.post(
        f"{fake_openai.base_url}/chat/completions", json=body, headers=_openai_headers(fake_openai)
    )
    assert response.status_code == 200
    data = response.json()
    assert data["object"] == "chat.completion"
    assert data["choices"][0]["message"] == {
        "role": "assistant",
        "content": "m1 says: hello there",
        "refusal": None,
    }
    assert data["choices"][0]["finish_reason"] == "stop"
    # prompt = words in all messages (4), completion = chunks ("m1 ", "says: ", "hello ", "there")
    assert data["usage"] == {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}


def test_openai_stream_with_usage_chunk(fake_openai: FakeOpenAIServer) -> None:
    body = {
        "model": "m1",
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    response = httpx.post(
        f"{fake_openai.base_url}/chat/completions", json=body, headers=_openai_headers(fake_openai)
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    data = _sse_data(response.text)
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == "m1 says: hello there"
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 2, "completion_tokens": 4, "total_tokens": 6}
    assert all(c["usage"] is None for c in chunks[:-1])


def test_openai_stream_without_include_usage_has_no_usage(fake_openai: FakeOpenAIServer) -> None:
    body = {"model": "m1", "messages": USER, "stream": True}
    response = httpx.post(
        f"{fake_openai.base_url}/chat/completions", json=body, headers=_openai_headers(fake_openai)
    )
    chunks = [json.loads(d) for d in _sse_data(response.text)[:-1]]
    assert all("usage" not in c for c in chunks)
    assert all(c["choices"] for c in chunks)


def test_openai_sdk_streams_and_lists_models(fake_openai: FakeOpenAIServer) -> None:
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key=fake_openai.api_key)
    stream = client.chat.completions.create(
        model="m2", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "m2 says: hello there"
    )
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 4
    assert [m.id for m in client.models.list()] == fake_openai.models
    client.close()


def test_openai_requires_key_and_checks_it(fake_openai: FakeOpenAIServer) -> None:
    url = f"{fake_openai.base_url}/chat/completions"
    body = {"model": "m1", "messages": USER}
    missing = httpx.post(url, json=body)
    wrong = httpx.post(url, json=body, headers={"Authorization": "Bearer sk-wrong-key"})
    assert missing.status_code == 401
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_api_key"


def test_openai_truncates_at_max_tokens(fake_openai: FakeOpenAIServer) -> None:
    body = {"model": "m1", "messages": USER, "max_tokens": 2}
    data = httpx.post(
        f"{fake_openai.base_url}/chat/completions", json=body, headers=_openai_headers(fake_openai)
    ).json()
    assert data["choices"][0]["message"]["content"] == "m1 says: "
    assert data["choices"][0]["finish_reason"] == "length"


# -- Anthropic ------------------------------------------------------------------------------------


def test_anthropic_plain_answer(fake_anthropic: FakeAnthropicServer) -> None:
    body = {"model": "c1", "max_tokens": 100, "system": "be brief", "messages": USER}
    response = httpx.post(
        f"{fake_anthropic.base_url}/v1/messages",
        json=body,
        headers=_anthropic_headers(fake_anthropic),
    )
    data = response.json()
    assert data["type"] == "message"
    assert data["content"] == [{"type": "text", "text": "c1 says: hello there"}]
    assert data["stop_reason"] == "end_turn"
    assert data["usage"] == {"input_tokens": 4, "output_tokens": 4}


def test_anthropic_stream_event_sequence(fake_anthropic: FakeAnthropicServer) -> None:
    body = {"model": "c1", "max_tokens": 100, "messages": USER, "stream": True}
    response = httpx.post(
        f"{fake_anthropic.base_url}/v1/messages",
        json=body,
        headers=_anthropic_headers(fake_anthropic),
    )
    events = _sse_events(response.text)
    assert events == [
        "message_start",
        "content_block_start",
        "ping",
        *["content_block_delta"] * 4,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    payloads = [json.loads(d) for d in _sse_data(response.text)]
    assert [p["type"] for p in payloads] == events
    assert payloads[0]["message"]["usage"]["input_tokens"] == 2
    deltas = [p["delta"]["text"] for p in payloads if p["type"] == "content_block_delta"]
    assert "".join(deltas) == "c1 says: hello there"
    assert payloads[-2]["usage"] == {"output_tokens": 4}


@pytest.mark.parametrize(
    ("drop", "status"),
    [("x-api-key", 401), ("anthropic-version", 400)],
)
def test_anthropic_requires_headers(
    fake_anthropic: FakeAnthropicServer, drop: str, status: int
) -> None:
    headers = _anthropic_headers(fake_anthropic)
    del headers[drop]
    body = {"model": "c1", "max_tokens": 10, "messages": USER}
    response = httpx.post(f"{fake_anthropic.base_url}/v1/messages", json=body, headers=headers)
    assert response.status_code == status
    assert response.json()["type"] == "error"


def test_anthropic_rejects_system_role_and_missing_max_tokens(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    url = f"{fake_anthropic.base_url}/v1/messages"
    headers = _anthropic_headers(fake_anthropic)
    system_role = {
        "model": "c1",
        "max_tokens": 10,
        "messages": [{"role": "system", "content": "x"}, *USER],
    }
    no_max = {"model": "c1", "messages": USER}
    for body in (system_role, no_max):
        response = httpx.post(url, json=body, headers=headers)
        assert response.status_code == 400
        assert response.json()["error"]["type"] == "invalid_request_error"


def test_anthropic_sdk_stream_helper(fake_anthropic: FakeAnthropicServer) -> None:
    client = anthropic.Anthropic(
        base_url=fake_anthropic.base_url,
        api_key=fake_anthropic.api_key,
        default_headers={"x-api-key": fake_anthropic.api_key or ""},
    )
    with client.messages.stream(model="c2", max_tokens=50, messages=USER) as stream:
        text = "".join(stream.text_stream)
        message = stream.get_final_message()
    assert text == "c2 says: hello there"
    assert message.usage.output_tokens == 4
    client.close()


# -- Scripting, log, lifecycle --------------------------------------------------------------------


def _post_openai(server: FakeOpenAIServer, **extra: Any) -> httpx.Response:
    body = {"model": "m1", "messages": USER, **extra}
    return httpx.post(
        f"{server.base_url}/chat/completions", json=body, headers=_openai_headers(server)
    )


def test_script_is_fifo_then_default(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Behaviour.status(500), Behaviour.status(429), Behaviour.ok("fixed text"))
    statuses = [_post_openai(fake_openai) for _ in range(4)]
    assert [r.status_code for r in statuses] == [500, 429, 200, 200]
    assert statuses[0].json()["error"]["type"] == "server_error"
    assert statuses[2].json()["choices"][0]["message"]["content"] == "fixed text"
    assert statuses[3].json()["choices"][0]["message"]["content"] == "m1 says: hello there"


def test_anthropic_error_format(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script(Behaviour.status(529))
    body = {"model": "c1", "max_tokens": 10, "messages": USER}
    response = httpx.post(
        f"{fake_anthropic.base_url}/v1/messages",
        json=body,
        headers=_anthropic_headers(fake_anthropic),
    )
    assert response.status_code == 529
    assert response.json()["error"]["type"] == "overloaded_error"


def test_reply_text_fixed_and_callable(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.reply_text = "always this"
    assert _post_openai(fake_openai).json()["choices"][0]["message"]["content"] == "always this"
    fake_openai.reply_text = lambda request: f"{len(request.messages)} message(s)"
    assert _post_openai(fake_openai).json()["choices"][0]["message"]["content"] == "1 message(s)"


def test_request_log(fake_openai: FakeOpenAIServer) -> None:
    _post_openai(fake_openai, temperature=0.5)
    _post_openai(fake_openai, stream=True)
    first, second = fake_openai.chat_requests
    assert first.path == "/v1/chat/completions"
    assert first.method == "POST"
    assert first.headers["authorization"] == f"Bearer {fake_openai.api_key}"
    assert first.body["temperature"] == 0.5
    assert first.messages == USER
    assert not first.stream and second.stream
    assert second.time >= first.time
    assert len(fake_openai.gaps()) == 1
    fake_openai.clear_log()
    assert fake_openai.requests == []


def test_malformed_body(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Behaviour.malformed(), Behaviour.malformed())
    plain = _post_openai(fake_openai)
    assert plain.status_code == 200
    with pytest.raises(ValueError):
        plain.json()
    streamed = _post_openai(fake_openai, stream=True)
    with pytest.raises(ValueError):
        json.loads(_sse_data(streamed.text)[0])


def test_cut_stream_breaks_the_connection(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Behaviour.cut_stream(after_tokens=2))
    body = {"model": "m1", "messages": USER, "stream": True}
    received = []
    with (
        pytest.raises(httpx.RemoteProtocolError),
        httpx.stream(
            "POST",
            f"{fake_openai.base_url}/chat/completions",
            json=body,
            headers=_openai_headers(fake_openai),
        ) as response,
    ):
        for line in response.iter_lines():
            if line.startswith("data: "):
                received.append(line)
    assert len(received) == 3  # role chunk + 2 tokens


def test_hang_is_released_by_stop() -> None:
    server = FakeOpenAIServer(default=Behaviour.hang()).start()
    outcome: list[object] = []

    def call() -> None:
        try:
            outcome.append(_post_openai(server))
        except httpx.HTTPError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    assert server.wait_for_requests(1, timeout=10)
    server.stop()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert isinstance(outcome[0], httpx.HTTPError)  # dropped without a response


def _post_in_thread(server: FakeOpenAIServer) -> tuple[threading.Thread, list[object]]:
    outcome: list[object] = []

    def call() -> None:
        try:
            outcome.append(_post_openai(server, stream=True))
        except httpx.HTTPError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    return thread, outcome


def test_a_held_stream_waits_after_its_tokens_until_released(
        fake_openai: FakeOpenAIServer) -> None:
    release = fake_openai.hold(after_tokens=2)
    thread, outcome = _post_in_thread(fake_openai)
    wait_for(lambda: fake_openai.held == 1, timeout=10, what="the stream to reach the hold")
    assert not outcome  # the answer is unfinished while it is held
    release.set()
    thread.join(timeout=ceiling(10))
    chunks = [json.loads(d) for d in _sse_data(outcome[0].text)[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == (
        "m1 says: hello there")
    assert fake_openai.held == 0


def test_a_held_stream_is_ended_by_stop() -> None:
    server = FakeOpenAIServer(api_key=None).start()
    server.hold(after_tokens=1)
    thread, outcome = _post_in_thread(server)
    wait_for(lambda: server.held == 1, timeout=10, what="the stream to reach the hold")
    server.stop()
    thread.join(timeout=ceiling(10))
    assert not thread.is_alive()
    assert isinstance(outcome[0], httpx.HTTPError)  # cut off mid-answer


def test_anthropic_models(fake_anthropic: FakeAnthropicServer) -> None:
    response = httpx.get(
        f"{fake_anthropic.base_url}/v1/models", headers=_anthropic_headers(fake_anthropic)
    )
    assert [m["id"] for m in response.json()["data"]] == fake_anthropic.models


def test_endpoint_helper(fake_anthropic: FakeAnthropicServer) -> None:
    endpoint = fake_anthropic.endpoint("claude-x", max_tokens=99)
    assert endpoint.provider_kind == "anthropic"
    assert endpoint.base_url == fake_anthropic.base_url
    assert endpoint.api_model == "claude-x"
    assert endpoint.max_tokens == 99
    assert endpoint.api_key_env == FakeAnthropicServer.api_key_env

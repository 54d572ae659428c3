"""The LLM client against real local fake servers (no mocks)."""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import traceback
from typing import Any

import pytest

from arena.llm import (
    Completion,
    LLMAuthError,
    LLMConfigError,
    LLMConnectionError,
    LLMContextExceeded,
    LLMError,
    LLMMalformedResponse,
    LLMRateLimited,
    LLMRequestRejected,
    LLMServerError,
    LLMTimeout,
    ModelEndpoint,
    complete_chat,
    estimate_tokens,
    scrub,
    stream_chat,
)
from arena.llm.client import backoff_delay, llm_timeouts, max_attempts
from testkit.fake_providers import Behaviour, FakeProviderServer

USER = [{"role": "user", "content": "what is two plus two"}]
SYSTEM = "You are a helpful assistant."


# Backoff base 0.05 s and 2 s timeouts (testkit.fixtures); tests override as needed.
pytestmark = pytest.mark.usefixtures("fast_llm_retries")


@pytest.fixture(params=["openai", "anthropic"])
def fake(request: pytest.FixtureRequest) -> FakeProviderServer:
    return request.getfixturevalue(f"fake_{request.param}")


def _endpoint(server: FakeProviderServer, **overrides: Any) -> ModelEndpoint:
    return server.endpoint("model-a", **{"system_prompt": SYSTEM, **overrides})


class Collector:
    """Caller-side view of a stream: partial text is dropped on restart."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.restarts = 0

    def on_delta(self, text: str) -> None:
        self.parts.append(text)

    def on_restart(self) -> None:
        self.restarts += 1
        self.parts.clear()

    @property
    def text(self) -> str:
        return "".join(self.parts)


# -- Happy paths ----------------------------------------------------------------------------------


async def test_stream_assembles_text_usage_and_cost(fake: FakeProviderServer) -> None:
    endpoint = _endpoint(fake, input_price_per_million=3.0, output_price_per_million=15.0)
    collector = Collector()
    completion = await stream_chat(endpoint, USER, on_delta=collector.on_delta)
    assert completion.text == "model-a says: what is two plus two"
    assert collector.text == completion.text
    assert len(collector.parts) == 7  # one delta per token
    # Fake usage: words in system + messages; one completion token per chunk.
    assert completion.input_tokens == 5 + 5
    assert completion.output_tokens == 7
    assert completion.cost_usd == pytest.approx((10 * 3.0 + 7 * 15.0) / 1e6)
    assert completion.attempts == 1
    assert completion.ttft_ms is not None
    assert completion.latency_ms >= completion.ttft_ms
    assert completion.usage_estimated is False
    assert fake.chat_requests[0].stream


async def test_complete_chat(fake: FakeProviderServer) -> None:
    endpoint = _endpoint(fake, input_price_per_million=1.0, output_price_per_million=2.0)
    completion = await complete_chat(endpoint, USER)
    assert completion == Completion(
        text="model-a says: what is two plus two",
        latency_ms=completion.latency_ms,
        ttft_ms=None,
        input_tokens=10,
        output_tokens=7,
        cost_usd=pytest.approx((10 * 1.0 + 7 * 2.0) / 1e6),
        attempts=1,
    )
    assert not fake.chat_requests[0].stream


async def test_async_on_delta_is_awaited(fake: FakeProviderServer) -> None:
    seen: list[str] = []

    async def on_delta(text: str) -> None:
        await asyncio.sleep(0)
        seen.append(text)

    completion = await stream_chat(_endpoint(fake), USER, on_delta=on_delta)
    assert "".join(seen) == completion.text


async def test_openai_system_prompt_is_first_message(fake_openai: FakeProviderServer) -> None:
    conversation = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "again"},
    ]
    await stream_chat(_endpoint(fake_openai, max_tokens=123), conversation)
    body = fake_openai.chat_requests[0].body
    assert body["messages"] == [{"role": "system", "content": SYSTEM}, *conversation]
    assert body["model"] == "model-a"
    assert body["max_tokens"] == 123
    assert body["stream_options"] == {"include_usage": True}


async def test_anthropic_system_prompt_is_top_level(fake_anthropic: FakeProviderServer) -> None:
    await complete_chat(_endpoint(fake_anthropic, max_tokens=77), USER)
    request = fake_anthropic.chat_requests[0]
    assert request.body["system"] == SYSTEM
    assert request.body["max_tokens"] == 77
    assert request.messages == USER
    assert all(m["role"] != "system" for m in request.messages)
    assert request.headers["x-api-key"] == fake_anthropic.api_key
    assert request.headers["anthropic-version"]


async def test_empty_system_prompt_is_omitted(fake: FakeProviderServer) -> None:
    await complete_chat(_endpoint(fake, system_prompt=""), USER)
    body = fake.chat_requests[0].body
    assert "system" not in body
    assert body["messages"] == USER


async def test_concurrent_calls_are_not_mixed_up(
    fake_openai: FakeProviderServer, fake_anthropic: FakeProviderServer
) -> None:
    left = fake_openai.endpoint("left-model")
    right = fake_anthropic.endpoint("right-model")
    fake_openai.token_delay = fake_anthropic.token_delay = 0.01
    results = await asyncio.gather(
        *[
            stream_chat(endpoint, [{"role": "user", "content": f"question {i}"}])
            for i in range(3)
            for endpoint in (left, right)
        ]
    )
    expected = [
        f"{name} says: question {i}" for i in range(3) for name in ("left-model", "right-model")
    ]
    assert [c.text for c in results] == expected
    assert sorted(r.messages[-1]["content"] for r in fake_openai.chat_requests) == [
        "question 0",
        "question 1",
        "question 2",
    ]
    assert {r.model for r in fake_anthropic.chat_requests} == {"right-model"}


async def test_missing_usage_is_estimated(fake: FakeProviderServer) -> None:
    fake.default = Behaviour.ok(usage=False)
    streamed = await stream_chat(_endpoint(fake), USER)
    plain = await complete_chat(_endpoint(fake), USER)
    for completion in (streamed, plain):
        assert completion.usage_estimated is True
        assert completion.output_tokens == math.ceil(len(completion.text) / 4)
        assert completion.input_tokens == estimate_tokens(SYSTEM + USER[0]["content"])


async def test_no_key_env_sends_placeholder(fake_openai: FakeProviderServer) -> None:
    fake_openai.api_key = None  # a local server that accepts anything
    completion = await complete_chat(_endpoint(fake_openai, api_key_env=None), USER)
    assert completion.text.startswith("model-a says:")
    assert fake_openai.chat_requests[0].headers["authorization"] == "Bearer no-key-configured"


# -- Retries --------------------------------------------------------------------------------------


async def test_server_error_is_retried_three_times(fake: FakeProviderServer) -> None:
    fake.default = Behaviour.status(500)
    with pytest.raises(LLMServerError) as caught:
        await stream_chat(_endpoint(fake), USER)
    assert len(fake.chat_requests) == 3
    assert caught.value.attempts == 3
    assert caught.value.status_code == 500
    assert caught.value.retryable
    assert "500" in caught.value.user_message


async def test_rate_limit_then_success(fake: FakeProviderServer) -> None:
    fake.script(Behaviour.status(429))
    completion = await stream_chat(_endpoint(fake), USER)
    assert completion.attempts == 2
    assert len(fake.chat_requests) == 2
    assert completion.text == "model-a says: what is two plus two"


async def test_rate_limit_every_time(fake: FakeProviderServer) -> None:
    fake.default = Behaviour.status(429)
    with pytest.raises(LLMRateLimited):
        await complete_chat(_endpoint(fake), USER)
    assert len(fake.chat_requests) == 3


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_client_errors_are_not_retried(fake: FakeProviderServer, status: int) -> None:
    fake.default = Behaviour.status(status)
    with pytest.raises(LLMRequestRejected) as caught:
        await stream_chat(_endpoint(fake), USER)
    assert not isinstance(caught.value, LLMAuthError)
    assert len(fake.chat_requests) == 1
    assert caught.value.attempts == 1
    assert not caught.value.retryable


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_are_not_retried(fake: FakeProviderServer, status: int) -> None:
    fake.default = Behaviour.status(status)
    with pytest.raises(LLMAuthError) as caught:
        await complete_chat(_endpoint(fake), USER)
    assert len(fake.chat_requests) == 1
    assert caught.value.status_code == status


async def test_wrong_key_is_an_auth_error(
    fake: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(fake.api_key_env, "sk-wrong-but-long-enough-key-123456")
    with pytest.raises(LLMAuthError):
        await stream_chat(_endpoint(fake), USER)
    assert len(fake.chat_requests) == 1


async def test_backoff_grows_between_retries(fake: FakeProviderServer, settings: Any) -> None:
    settings.ARENA_LLM_BACKOFF_BASE = 0.1
    fake.default = Behaviour.status(503)
    with pytest.raises(LLMServerError):
        await complete_chat(_endpoint(fake), USER)
    gap1, gap2 = fake.gaps()
    # Lower bounds only: a busy machine adds to a gap (one request's overhead once made the
    # first gap longer than the second), but no wait is shorter than its backoff.
    assert gap1 >= 0.09  # waited at least base * 2**0
    assert gap2 >= 0.19  # waited at least base * 2**1


async def test_read_timeout_is_retried_then_raised(fake: FakeProviderServer, settings: Any) -> None:
    settings.ARENA_LLM_TIMEOUTS = {"read": 0.3}
    fake.default = Behaviour.hang()
    with pytest.raises(LLMTimeout) as caught:
        await stream_chat(_endpoint(fake), USER)
    assert caught.value.attempts == 3
    assert len(fake.chat_requests) == 3


async def test_slow_first_token_then_answer_within_read_timeout(
    fake: FakeProviderServer, settings: Any
) -> None:
    settings.ARENA_LLM_TIMEOUTS = {"read": 2.0}
    fake.script(Behaviour.ok(first_token_delay=0.2))
    completion = await stream_chat(_endpoint(fake), USER)
    assert completion.attempts == 1
    assert completion.ttft_ms is not None and completion.ttft_ms >= 150


async def test_connection_refused(settings: Any) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    endpoint = ModelEndpoint(
        slug="nowhere",
        provider_kind="openai",
        api_model="x",
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key_env=None,
        max_tokens=10,
        system_prompt="",
    )
    with pytest.raises(LLMConnectionError) as caught:
        await stream_chat(endpoint, USER)
    assert caught.value.attempts == 3


async def test_malformed_body_is_retried_then_raised(fake: FakeProviderServer) -> None:
    fake.default = Behaviour.malformed()
    with pytest.raises(LLMMalformedResponse):
        await complete_chat(_endpoint(fake), USER)
    with pytest.raises(LLMMalformedResponse):
        await stream_chat(_endpoint(fake), USER)
    assert len(fake.chat_requests) == 6


async def test_malformed_then_ok(fake: FakeProviderServer) -> None:
    fake.script(Behaviour.malformed(b'{"unexpected": "shape"}'))
    completion = await complete_chat(_endpoint(fake), USER)
    assert completion.attempts == 2


async def test_cut_stream_restarts_and_keeps_only_final_attempt(
    fake: FakeProviderServer,
) -> None:
    fake.script(Behaviour.cut_stream(after_tokens=3))
    collector = Collector()
    completion = await stream_chat(
        _endpoint(fake), USER, on_delta=collector.on_delta, on_restart=collector.on_restart
    )
    assert collector.restarts == 1
    assert completion.attempts == 2
    assert completion.text == "model-a says: what is two plus two"
    assert collector.text == completion.text


async def test_every_attempt_cut_raises(fake: FakeProviderServer) -> None:
    fake.default = Behaviour.cut_stream(after_tokens=2)
    collector = Collector()
    with pytest.raises(LLMConnectionError):
        await stream_chat(
            _endpoint(fake), USER, on_delta=collector.on_delta, on_restart=collector.on_restart
        )
    assert collector.restarts == 2  # before attempts 2 and 3
    assert len(fake.chat_requests) == 3


async def test_async_on_restart_is_awaited(fake: FakeProviderServer) -> None:
    fake.script(Behaviour.cut_stream(after_tokens=1))
    calls: list[str] = []

    async def on_restart() -> None:
        calls.append("restart")

    await stream_chat(_endpoint(fake), USER, on_delta=lambda _t: None, on_restart=on_restart)
    assert calls == ["restart"]


async def test_error_before_any_text_does_not_call_on_restart(fake: FakeProviderServer) -> None:
    fake.script(Behaviour.status(500))
    collector = Collector()
    await stream_chat(
        _endpoint(fake), USER, on_delta=collector.on_delta, on_restart=collector.on_restart
    )
    assert collector.restarts == 0


async def test_in_stream_error_event_is_retried(fake: FakeProviderServer) -> None:
    fake.script(Behaviour.stream_error(after_tokens=2))
    collector = Collector()
    completion = await stream_chat(
        _endpoint(fake), USER, on_delta=collector.on_delta, on_restart=collector.on_restart
    )
    assert completion.attempts == 2
    assert collector.restarts == 1
    assert collector.text == completion.text


async def test_delay_and_total_time_behaviours(fake: FakeProviderServer) -> None:
    fake.script(Behaviour.delay(0.1), Behaviour.ok(total_time=0.2))
    delayed = await stream_chat(_endpoint(fake), USER)
    paced = await stream_chat(_endpoint(fake), USER)
    for completion in (delayed, paced):
        assert completion.text == "model-a says: what is two plus two"
        assert completion.attempts == 1
        assert completion.latency_ms >= 90  # the server waited at least this long


async def test_cancellation_propagates(fake: FakeProviderServer) -> None:
    fake.default = Behaviour.ok(token_delay=0.05)
    started = asyncio.Event()

    def on_delta(_text: str) -> None:
        started.set()

    task = asyncio.create_task(stream_chat(_endpoint(fake), USER, on_delta=on_delta))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(fake.chat_requests) == 1


async def test_callback_exception_propagates_without_retry(fake: FakeProviderServer) -> None:
    class Gone(Exception):
        pass

    def on_delta(_text: str) -> None:
        raise Gone

    with pytest.raises(Gone):
        await stream_chat(_endpoint(fake), USER, on_delta=on_delta)
    assert len(fake.chat_requests) == 1


async def test_max_attempts_setting(fake: FakeProviderServer, settings: Any) -> None:
    settings.ARENA_LLM_MAX_ATTEMPTS = 1
    fake.default = Behaviour.status(500)
    with pytest.raises(LLMServerError):
        await complete_chat(_endpoint(fake), USER)
    assert len(fake.chat_requests) == 1


# -- Configuration --------------------------------------------------------------------------------


async def test_unset_key_env_is_config_error(
    fake: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(fake.api_key_env)
    with pytest.raises(LLMConfigError) as caught:
        await stream_chat(_endpoint(fake), USER)
    assert fake.api_key_env in str(caught.value)
    assert not caught.value.retryable
    assert fake.chat_requests == []


async def test_unknown_provider_kind_is_config_error(fake_openai: FakeProviderServer) -> None:
    with pytest.raises(LLMConfigError):
        await complete_chat(_endpoint(fake_openai, provider_kind="mystery"), USER)


async def test_bad_messages_are_rejected_before_any_request(
    fake_openai: FakeProviderServer,
) -> None:
    with pytest.raises(ValueError):
        await complete_chat(_endpoint(fake_openai), [{"role": "system", "content": "x"}])
    with pytest.raises(ValueError):
        await complete_chat(_endpoint(fake_openai), [])
    assert fake_openai.requests == []


def test_settings_defaults_and_overrides(settings: Any) -> None:
    del settings.ARENA_LLM_TIMEOUTS
    del settings.ARENA_LLM_BACKOFF_BASE
    assert llm_timeouts() == {"connect": 5.0, "read": 30.0, "write": 5.0, "pool": 5.0}
    assert max_attempts() == 3
    assert [backoff_delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 4.0]
    settings.ARENA_LLM_TIMEOUTS = {"read": 0.5}
    assert llm_timeouts()["read"] == 0.5
    assert llm_timeouts()["connect"] == 5.0
    settings.ARENA_LLM_BACKOFF_BASE = 0.05
    assert [backoff_delay(n) for n in (1, 2)] == [0.05, 0.1]


# -- Secrets --------------------------------------------------------------------------------------


def _assert_no_key(key: str, error: LLMError, caplog: pytest.LogCaptureFixture) -> None:
    rendered = "".join(traceback.format_exception(error))
    for text in (str(error), repr(error), error.user_message, error.detail, rendered):
        assert key not in text
    assert error.__cause__ is None
    assert caplog.records, "expected log records"
    for record in caplog.records:
        assert key not in record.getMessage()
    assert key not in caplog.text


@pytest.mark.parametrize("status", [401, 500])
async def test_key_never_leaks_even_when_echoed(
    fake: FakeProviderServer, caplog: pytest.LogCaptureFixture, status: int
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.default = Behaviour.status(status, "Bad key", echo_key=True)
    with pytest.raises(LLMError) as caught:
        await stream_chat(_endpoint(fake), USER)
    assert fake.api_key
    _assert_no_key(fake.api_key, caught.value, caplog)
    assert "[REDACTED]" in caught.value.detail


async def test_wrong_key_echoed_by_server_never_leaks(
    fake: FakeProviderServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "wrong-key-0123456789abcdef"
    monkeypatch.setenv(fake.api_key_env, wrong)
    with pytest.raises(LLMAuthError) as caught:
        await complete_chat(_endpoint(fake), USER)
    _assert_no_key(wrong, caught.value, caplog)


@pytest.mark.django_db(transaction=True)  # the call is entered in the ledger
async def test_success_logs_without_key(
    fake: FakeProviderServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.script(Behaviour.status(500))
    await stream_chat(_endpoint(fake), USER)
    assert fake.api_key and fake.api_key not in caplog.text
    levels = [
        (r.levelname, r.getMessage().split(":")[0]) for r in caplog.records if r.name == "arena.llm"
    ]
    assert levels == [("WARNING", "LLM call retry"), ("INFO", "LLM call ok")]


def test_scrub() -> None:
    key = "my-secret-key-value"
    assert scrub(f"token {key} here", [key]) == "token [REDACTED] here"
    assert "abc123" not in scrub("Authorization: Bearer abc123def")
    assert "hunter2" not in scrub("https://user:hunter2@example.com/v1")
    assert "sk-abcd" not in scrub("Incorrect API key provided: sk-abcd************wxyz.")
    assert "zzz" not in scrub("{'x-api-key': 'zzzsecret'}")
    assert scrub("nothing secret", [None, ""]) == "nothing secret"


@pytest.mark.parametrize("message", [
    "This model's maximum context length is 4096 tokens. However, your messages resulted in "
    "6481 tokens.",  # OpenAI
    "the request exceeds the available context size, try increasing it",  # llama.cpp
])
async def test_a_context_overflow_is_said_in_words(fake: FakeProviderServer, message) -> None:
    fake.default = Behaviour.status(400, message)
    with pytest.raises(LLMContextExceeded) as caught:
        await stream_chat(_endpoint(fake), USER)
    assert "too long for this model" in caught.value.user_message
    assert "HTTP 400" not in caught.value.user_message
    assert len(fake.chat_requests) == 1  # retrying cannot help


@pytest.mark.parametrize("stream", [True, False])
async def test_an_answer_stopped_at_max_tokens_says_so(fake: FakeProviderServer, stream) -> None:
    fake.reply_text = "one two three four five six seven eight"
    call = stream_chat if stream else complete_chat
    cut = await call(_endpoint(fake, max_tokens=3), USER)
    assert cut.cut_at_limit and cut.output_tokens == 3
    whole = await call(_endpoint(fake, max_tokens=100), USER)
    assert not whole.cut_at_limit
    assert whole.text.split() == fake.reply_text.split()

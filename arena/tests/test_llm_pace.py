"""Calls to an embedded model are paced by what it has shown it can do: the wait for its first
byte follows the prompt, its answer is capped at what it writes in the allowed time, and both
follow the speeds its server reports (real fake server speaking llama.cpp's OpenAI API)."""

from __future__ import annotations

from typing import Any

import pytest

from arena.llm import LLMTimeout, complete_chat, pace, stream_chat
from arena.local_models.specs import LOCAL_MODELS
from testkit.fake_providers import Behaviour, FakeOpenAIServer

pytestmark = pytest.mark.usefixtures("fast_llm_retries")

LONG_PROMPT = [{"role": "user", "content": "x" * 5000}]  # the newcomer's unbroken string


@pytest.fixture(autouse=True)
def _fresh_speeds():
    pace._speeds.clear()
    yield
    pace._speeds.clear()


def _local(fake: FakeOpenAIServer, **overrides: Any):
    return fake.endpoint("model-a", **{"local_key": "qwen-coder", "max_tokens": 1024,
                                       **overrides})


async def test_a_long_prompt_gets_the_time_a_local_model_needs_to_read_it(
        fake_openai: FakeOpenAIServer, settings) -> None:
    """The configured read timeout (1 s here) is far shorter than reading 5,000 characters
    at the model's speed: a local model is given that time, a remote one is not."""
    settings.ARENA_LLM_TIMEOUTS = {"read": 1.0}
    fake_openai.default = Behaviour.ok("read it", first_token_delay=2.5)
    completion = await stream_chat(_local(fake_openai), LONG_PROMPT)
    assert completion.text == "read it" and completion.attempts == 1
    with pytest.raises(LLMTimeout):
        await stream_chat(_local(fake_openai, local_key=""), LONG_PROMPT)


def test_the_read_timeout_grows_with_the_prompt_and_never_falls_below_the_setting(
        fake_openai: FakeOpenAIServer) -> None:
    configured = {"connect": 5.0, "read": 30.0, "write": 5.0, "pool": 5.0}
    endpoint = _local(fake_openai)
    short = pace.call_timeouts(endpoint, [{"role": "user", "content": "hi"}], configured)
    long = pace.call_timeouts(endpoint, LONG_PROMPT, configured)
    assert short == configured
    speed = LOCAL_MODELS["qwen-coder"].prompt_tokens_per_second
    assert long["read"] >= pace.SLACK * 1667 / speed  # 5,000 bytes at 3 bytes a token
    remote = _local(fake_openai, local_key="")
    assert pace.call_timeouts(remote, LONG_PROMPT, configured) == configured


async def test_an_answer_is_capped_at_what_the_model_writes_in_the_allowed_time(
        fake_openai: FakeOpenAIServer, settings) -> None:
    settings.ARENA_LOCAL_ANSWER_SECONDS = 20
    await complete_chat(_local(fake_openai), [{"role": "user", "content": "hi"}])
    speed = LOCAL_MODELS["qwen-coder"].answer_tokens_per_second
    assert fake_openai.chat_requests[-1].body["max_tokens"] == int(speed * 20)
    # A model's own, lower limit stands; a remote model is never capped.
    await complete_chat(_local(fake_openai, max_tokens=50), [{"role": "user", "content": "hi"}])
    assert fake_openai.chat_requests[-1].body["max_tokens"] == 50
    await complete_chat(_local(fake_openai, local_key=""), [{"role": "user", "content": "hi"}])
    assert fake_openai.chat_requests[-1].body["max_tokens"] == 1024


@pytest.mark.parametrize("call", [stream_chat, complete_chat])
async def test_the_speeds_follow_what_the_server_reports(
        fake_openai: FakeOpenAIServer, settings, call) -> None:
    """llama.cpp sends ``timings`` with each answer; a slow machine's speed lowers the cap
    at once (a weighted average, so one odd answer moves it only part of the way)."""
    settings.ARENA_LOCAL_ANSWER_SECONDS = 40
    before = pace.speed_of("qwen-coder")
    fake_openai.timings = {"prompt_n": 500, "prompt_per_second": 10.0,
                           "predicted_n": 100, "predicted_per_second": 3.0}
    await call(_local(fake_openai), [{"role": "user", "content": "hi"}])
    after = pace.speed_of("qwen-coder")
    assert 10.0 < after.prompt < before.prompt and 3.0 < after.answer < before.answer
    await complete_chat(_local(fake_openai), [{"role": "user", "content": "hi"}])
    assert fake_openai.chat_requests[-1].body["max_tokens"] == max(
        pace.MIN_ANSWER_TOKENS, int(after.answer * 40))


def test_tiny_samples_and_junk_timings_measure_nothing(fake_openai: FakeOpenAIServer) -> None:
    before = pace.speed_of("qwen-coder")
    endpoint = _local(fake_openai)
    pace.observe(endpoint, {"prompt_n": 3, "prompt_per_second": 1.0, "predicted_n": 2,
                            "predicted_per_second": 0.5})
    pace.observe(endpoint, {"prompt_n": "many", "prompt_per_second": float("nan")})
    pace.observe(endpoint, None)
    assert pace.speed_of("qwen-coder") == before

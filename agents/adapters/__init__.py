"""Which adapter reaches an agent configuration, and whether it can be reached here.

:func:`agent_problem` says why an agent cannot take calls now (``None``: it can);
:func:`adapter_for` builds its adapter. Local agents need the speech models and their LLM;
managed agents (Vapi, Retell) need their provider's key and a complete configuration.
"""

from __future__ import annotations

import asyncio
import os

from django.conf import settings

from agents.adapters.base import AgentAdapter, AgentUnavailable
from agents.adapters.echo import EchoAdapter
from agents.adapters.local import Brief, LocalCascadeAdapter
from agents.adapters.managed import ProviderAPI
from agents.adapters.retell import RetellAdapter
from agents.models import AgentConfiguration, Provider, Scenario
from agents.speech.stt import stt_problem
from agents.speech.tts import tts_problem
from arena.selectors import model_endpoint_by_slug, model_with_availability

PROVIDER_KEYS = {Provider.VAPI: "VAPI_API_KEY", Provider.RETELL: "RETELL_API_KEY"}
NO_KEY = "{provider} needs {env} in the environment."
NO_SETTING = "Its configuration lacks {keys}."
# What a managed agent's configuration must name (fixtures/voice/agents.yaml).
MANAGED_SETTINGS = {Provider.VAPI: ("model_provider", "model", "voice", "transcriber"),
                    Provider.RETELL: ("model", "voice_id")}
NO_LLM = "Its language model is not configured: {slug}."


# Added to every agent's instructions, the same for both: a voice that names its maker would
# unblind the battle (and no filter can take a word back out of audio).
STAY_ANONYMOUS = "Never say which AI model, assistant product or company you are."


def brief_for(scenario: Scenario) -> Brief:
    return Brief(system_prompt=f"{scenario.system_prompt}\n\n{STAY_ANONYMOUS}",
                 first_message=scenario.first_message,
                 tools=list(scenario.tools_available or []))


def agent_problem(config: AgentConfiguration) -> str | None:
    """Why ``config`` cannot take a call here, or ``None``."""
    if not config.active:
        return "This agent is retired."
    if config.provider == Provider.LOCAL:
        problem = stt_problem() or tts_problem()
        if problem:
            return problem
        slug = config.config_json.get("llm", "")
        found = model_with_availability(slug)
        if found is None:
            return NO_LLM.format(slug=slug or "(none)")
        return None if found[1].available else found[1].reason
    if config.provider == Provider.ECHO:
        return None
    env = PROVIDER_KEYS.get(config.provider)
    if env is None:
        return f"Unknown provider {config.provider!r}."
    if not os.environ.get(env):
        return NO_KEY.format(provider=config.get_provider_display(), env=env)
    missing = [key for key in MANAGED_SETTINGS[config.provider]
               if not config.config_json.get(key)]
    if missing:
        return NO_SETTING.format(keys=", ".join(missing))
    return None


def adapter_for(config: AgentConfiguration, scenario: Scenario) -> AgentAdapter:
    """The adapter for one call (raises :class:`AgentUnavailable` with the reason). Runs
    in a thread with the database (it reads the model registry)."""
    problem = agent_problem(config)
    if problem:
        raise AgentUnavailable(problem)

    if config.provider == Provider.ECHO:
        return EchoAdapter()
    if config.provider == Provider.VAPI:
        from agents.adapters.vapi import VapiAdapter  # noqa: PLC0415 - websockets: Vapi calls only

        return VapiAdapter(config=config.config_json, brief=brief_for(scenario),
                           max_seconds=scenario.max_duration_seconds)
    if config.provider == Provider.RETELL:
        return RetellAdapter(config=config, brief=brief_for(scenario),
                             max_seconds=scenario.max_duration_seconds)

    voice, rate = local_voice(config)
    return LocalCascadeAdapter(brief=brief_for(scenario),
                               endpoint=model_endpoint_by_slug(config.config_json["llm"]),
                               voice=voice, rate=rate)


def local_voice(config: AgentConfiguration) -> tuple[str, int]:
    """An offline agent's eSpeak NG voice and rate (words a minute)."""
    return config.config_json.get("voice", "en-us"), int(config.config_json.get("rate", 170))


PING_PATHS = {Provider.VAPI: "/assistant?limit=1", Provider.RETELL: "/list-voices"}


def provider_ping(provider: str) -> str | None:
    """Ask a managed provider's API whether it takes our key: ``None`` or the failure."""
    base = settings.VAPI_BASE_URL if provider == Provider.VAPI else settings.RETELL_BASE_URL
    api = ProviderAPI(name=Provider(provider).label, base_url=base,
                      key_env=PROVIDER_KEYS[provider])
    return asyncio.run(api.ping(PING_PATHS[provider]))

"""Which adapter reaches an agent configuration, and whether it can be reached here.

:func:`agent_problem` says why an agent cannot take calls now (``None``: it can);
:func:`adapter_for` builds its adapter. Local agents need the speech models and their LLM;
managed agents need their provider's key.
"""

from __future__ import annotations

import os

from agents.adapters.base import AgentAdapter, AgentUnavailable
from agents.adapters.local import Brief
from agents.models import AgentConfiguration, Provider, Scenario

PROVIDER_KEYS = {Provider.VAPI: "VAPI_API_KEY", Provider.RETELL: "RETELL_API_KEY"}
NO_KEY = "{provider} needs {env} in the environment."
NOT_BUILT = "{provider} calls are not supported by this build."
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
        from agents.speech.stt import stt_problem
        from agents.speech.tts import tts_problem
        from arena.selectors import model_with_availability

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
    return NOT_BUILT.format(provider=config.get_provider_display())


def adapter_for(config: AgentConfiguration, scenario: Scenario) -> AgentAdapter:
    """The adapter for one call (raises :class:`AgentUnavailable` with the reason). Runs
    in a thread with the database (it reads the model registry)."""
    problem = agent_problem(config)
    if problem:
        raise AgentUnavailable(problem)
    from agents.adapters.local import LocalCascadeAdapter
    from arena.selectors import model_endpoint_by_slug

    if config.provider == Provider.ECHO:
        from agents.adapters.echo import EchoAdapter

        return EchoAdapter()

    settings = config.config_json
    return LocalCascadeAdapter(brief=brief_for(scenario),
                               endpoint=model_endpoint_by_slug(settings["llm"]),
                               voice=settings.get("voice", "en-us"),
                               rate=int(settings.get("rate", 170)))

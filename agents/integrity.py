"""Vote integrity for voice battles: which votes count for the voice boards under the
platform's rules (:mod:`arena.contests.counting`: the daily cap, flagged visitors), and
whether a call named an agent (:func:`battle_leak`: then the vote does not count)."""

from __future__ import annotations

from dataclasses import dataclass

from agents.models import AgentBattle, AgentConfiguration, AgentVote, Overall
from arena.contests.counting import CountedVotes
from arena.contests.integrity import CastVote
from arena.contests.leaks import leaked_identity
from arena.models import AIModel

NAMES_AN_AGENT = "a call names an agent ({term!r})"


@dataclass(frozen=True)
class AgentNames:
    """An agent as the identity-leak filter reads a model: its names, its provider's, and
    its components' (speech to text, model, voice)."""

    slug: str
    api_model: str
    name: str
    organization: str
    provider: str
    aliases: tuple[str, ...]


def agent_names(config: AgentConfiguration) -> list:
    """What would tell a caller which agent this is: the agent, and the registry's model of
    a local agent (its own names and aliases)."""
    components = tuple(str(value) for value in (config.components_json or {}).values())
    names: list = [AgentNames(slug=config.slug, api_model=config.slug, name=config.name,
                              organization=config.get_provider_display(),
                              provider=config.provider, aliases=components)]
    llm = (config.config_json or {}).get("llm")
    model = AIModel.objects.filter(pk=llm).first() if llm else None
    return [*names, model] if model is not None else names


def battle_leak(battle: AgentBattle) -> str | None:
    """The first name of either agent heard in either call (both sides, as transcribed
    live), else None."""
    texts = [turn.get("text") or "" for conversation in battle.conversations.all()
             for turn in conversation.turns_json]
    return leaked_identity(texts, [*agent_names(battle.config_a),
                                   *agent_names(battle.config_b)])


def _cast(overall, config_a, config_b, at) -> CastVote:
    pair = ((config_a, config_b) if overall == Overall.A
            else (config_b, config_a) if overall == Overall.B else (None, None))
    return CastVote(overall if overall != Overall.TIE else None, *pair, at)


COUNTED_VOTES = CountedVotes(
    mode="agents", model=AgentVote, session="session_key",
    facts=("overall", "battle__config_a_id", "battle__config_b_id"), cast=_cast)
